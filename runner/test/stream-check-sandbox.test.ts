// The registry block against split packets with real podman, the installed firewall and the
// stream check (issue 34 item 1): a container sends a registry's name split across TCP
// segments, TLS records, header lines and DNS messages to a stand-in internet host
// (support/wan-host.ts); the firewall's TPROXY rules divert them to the stream check, which
// refuses them and lets other names through to the same host.
import t from 'tap';
import { makeHarness, py } from './support/harness.ts';
import { withStreamCheck } from './support/stream-check.ts';
import { WAN_ADDRESS, startWanHost } from './support/wan-host.ts';

const h = makeHarness({ SCRAPER_DEFAULT_TIMEOUT: '90' });
t.teardown(() => h.close());
t.teardown(startWanHost());

/** Python run in the container: helpers to send byte strings as separate TCP segments. */
const CLIENT = `import socket, ssl, time
W = "${WAN_ADDRESS}"
def hello(name):
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    o = ssl.create_default_context().wrap_bio(inc, out, server_hostname=name)
    try:
        o.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()
def records(h, cut):
    body = h[5:]
    rec = lambda p: bytes([0x16, 3, 1, len(p) >> 8, len(p) & 255]) + p
    return rec(body[:cut]) + rec(body[cut:])
def dns(name):
    m = bytes([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])
    m += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + bytes([0, 0, 1, 0, 1])
    return len(m).to_bytes(2, "big") + m
def send(port, parts, host=W):
    try:
        c = socket.create_connection((host, port), 3)
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for p in parts:
            c.sendall(p); time.sleep(0.1)
        c.settimeout(3)
        return "seen" if c.recv(16) == b"seen" else "closed"
    except OSError:
        return "refused"
`;

t.test('without the stream check, TCP 443 and 80 find no listener: dropped (fails closed)', async (t) => {
  const { body } = await h.run(
    py(`${CLIENT}
print(send(443, [hello("example.org")]), send(80, [b"GET / HTTP/1.1\\r\\nHost: example.org\\r\\n\\r\\n"]))`),
  );
  t.equal(body.exit_code, 0, body.stderr);
  t.equal(body.stdout.trim(), 'refused refused');
});

t.test('with the stream check', async (t) => {
  const check = await withStreamCheck(t, h.config);

  t.test('TLS: split ClientHellos naming a registry are refused, another name passes', async (t) => {
    const { body } = await h.run(
      py(`${CLIENT}
out = []
for name, domain in (("pypi.org", b"pypi"), ("registry.npmjs.org", b"npmjs"), ("files.pythonhosted.org", b"pythonhosted")):
    h = hello(name); cut = h.index(domain) + 2  # no packet holds the whole registry name
    out += [send(443, [h[:cut], h[cut:]]), send(443, [records(h, cut - 5)]), send(443, [records(h, cut - 5)[:cut], records(h, cut - 5)[cut:]])]
h = hello("example.org")
out += [send(443, [h[:40], h[40:]]), send(443, [records(h, 60)])]
print(" ".join(out))`),
    );
    t.equal(body.exit_code, 0, body.stderr);
    t.equal(body.stdout.trim(), `${'refused '.repeat(9)}seen seen`, JSON.stringify(check.refusals));
    t.equal(
      check.refusals.filter((r) => r.refused.startsWith('TLS server name')).length,
      9,
      'refused by the check',
    );
  });

  t.test('HTTP: a split Host naming a registry is refused, another host passes', async (t) => {
    const { body } = await h.run(
      py(`${CLIENT}
print(send(80, [b"GET /simple/six/ HTTP/1.1\\r\\nHo", b"st: py", b"pi.org\\r\\n\\r\\n"]),
      send(80, [b"GET http://pypi.org/simple/ HTTP/1.1\\r\\n", b"Host: example.org\\r\\n\\r\\n"]),
      send(80, [b"GET / HTTP/1.1\\r\\nHost: exa", b"mple.org\\r\\n\\r\\n"]))`),
    );
    t.equal(body.exit_code, 0, body.stderr);
    t.equal(body.stdout.trim(), 'refused refused seen');
  });

  t.test('DNS over TCP: a query split inside the name, or after another, is refused', async (t) => {
    const { body } = await h.run(
      py(`${CLIENT}
q = dns("pypi.org"); r = dns("registry.npmjs.org"); cut = r.index(b"npmjs") + 2
print(send(53, [q[:16], q[16:]]), send(53, [dns("example.org")]))
send(53, [dns("example.org") + r[:cut], r[cut:]])`),
    );
    t.equal(body.exit_code, 0, body.stderr);
    t.equal(body.stdout.trim(), 'refused seen');
    t.same(
      check.refusals.filter((r) => r.port === 53).map((r) => r.refused),
      ['query for pypi.org', 'query for registry.npmjs.org'],
      'the second query of a connection is read too',
    );
  });

  t.test(
    'DNS over TLS, QUIC and DNS to a non-resolver are dropped; the check itself is out of reach',
    async (t) => {
      const { body } = await h.run(
        py(`${CLIENT}
def udp(port, host=W):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(2)
    u.sendto(b"\\x00\\x01example", (host, port))
    try:
        u.recv(64); return "answered"
    except OSError:
        return "dropped"
gateway = [l.split()[2] for l in open("/proc/net/route") if l.split()[1] == "00000000"][0]
gateway = socket.inet_ntoa(bytes.fromhex(gateway)[::-1])
print(send(853, [b"hi"]), udp(853), udp(443), udp(53, "${WAN_ADDRESS.replace(/2$/, '1')}"),
      send(${h.config.streamCheckPort}, [b"hi"], gateway), send(${h.config.streamCheckPort}, [b"hi"], "127.0.0.1"))`),
      );
      t.equal(body.exit_code, 0, body.stderr);
      t.equal(body.stdout.trim(), 'refused dropped dropped dropped refused refused');
    },
  );
});

t.test('nothing is left behind', async (t) => {
  t.same(h.workspaces(), []);
  t.same(h.containers(), []);
});
