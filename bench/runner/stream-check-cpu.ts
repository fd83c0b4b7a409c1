// What the stream check costs the host per downloaded byte (issue 34): the sandbox's TCP 443 is
// redirected to a Node process on the host that splices every byte in user space, so a
// scraper's downloads cost host CPU outside its container's 1-CPU limit. In one run:
//   - proxied: a container downloads SIZE MB over TLS from a stand-in outside host (a network
//     namespace at 198.18.0.2, port 443, so the firewall redirects it through the stream check);
//     the CPU time of the stream check's process and its original-destination helper is read
//     from /proc before and after;
//   - relay (baseline): the same bytes through the plainest Node relay (socket.pipe both ways,
//     its own process), downloaded by curl on the host, the relay's CPU read the same way;
//   - direct: the same download without anything in the path (the container to port 4443,
//     which is not redirected; curl on the host), for the MB/s.
// Prints CPU-seconds per GB and MB/s of each, with the load average.
//
//   npm run bench:stream-check -w runner [-- SIZE_MB ROUNDS]   (root, podman, the images, the
//                                                               sandbox network; defaults 200 2)
// Refuses to run while another process listens on the stream check's port: SO_REUSEPORT would
// spread the connections over both and the figures would be wrong.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxSubnets } from '../../runner/src/sandbox/preflight.ts';
import { startStreamCheck } from '../../runner/src/sandbox/stream-check/launch.ts';
import { postRun, quantile, startRunner } from './common.ts';
import { cpuSeconds } from './log-flood.ts';

const SIZE_MB = Number(process.argv[2] ?? 200);
const ROUNDS = Number(process.argv[3] ?? 2);
// RFC 2544's benchmarking range: not one the firewall drops, not the tests' stand-in (TEST-NET-2),
// nor this machine's own network (TEST-NET-1 here, TEST-NET-3 for its proxy).
const WAN = '198.18.0.2';
const say = (line: string) => process.stdout.write(`${line}\n`);
const sh = (cmd: string) => spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });

// The stand-in outside host: TLS on 443 (redirected for the sandbox) and 4443 (not), answering
// `GET /<MB>` with that many random-looking bytes.
const SERVER = `
import os, socket, ssl, sys, threading
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(sys.argv[1], sys.argv[2])
BLOCK = os.urandom(1 << 20)
def serve(c):
    try:
        t = ctx.wrap_socket(c, server_side=True)
        head = b""
        while b"\\r\\n\\r\\n" not in head:
            d = t.recv(4096)
            if not d:
                return
            head += d
        n = int(head.split(b" ")[1].strip(b"/")) << 20
        t.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\nConnection: close\\r\\n\\r\\n" % n)
        while n > 0:
            k = min(n, len(BLOCK)); t.sendall(BLOCK[:k]); n -= k
        t.close()
    except (OSError, ValueError):
        pass
    finally:
        c.close()
def listen(port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("${WAN}", port)); s.listen(16)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
threading.Thread(target=listen, args=(4443,), daemon=True).start()
listen(443)
`;

const RELAY = `
const net = require('node:net');
net.createServer((c) => {
  const s = net.connect(4443, '${WAN}');
  c.pipe(s); s.pipe(c);
  c.on('error', () => s.destroy()); s.on('error', () => c.destroy());
}).listen(0, '127.0.0.1', function () { console.log(this.address().port); });
`;

const CLIENT = (port: number) => `import socket, ssl, time
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
began = time.monotonic()
s = ctx.wrap_socket(socket.create_connection(("${WAN}", ${port}), 10), server_hostname="download.example")
s.sendall(b"GET /${SIZE_MB} HTTP/1.1\\r\\nHost: download.example\\r\\nConnection: close\\r\\n\\r\\n")
n = 0
while True:
    d = s.recv(1 << 20)
    if not d:
        break
    n += len(d)
print(n, time.monotonic() - began)
`;

function listenersOn(port: number): string {
  return sh(`ss -Hltn 'sport = :${port}'`).stdout.trim();
}

/** The pids of `pid`'s children (the stream check's Python helper). */
function childrenOf(pid: number): number[] {
  const pids: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    if (list !== '') pids.push(...list.split(' ').map(Number));
  }
  return pids;
}

const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);

interface Figure {
  cpu: number;
  seconds: number;
  bytes: number;
}

function summary(name: string, figures: Figure[]): string {
  const perGb = figures.map((f) => f.cpu / (f.bytes / 1e9));
  const mbs = figures.map((f) => f.bytes / 1e6 / f.seconds);
  const cpu = figures.some((f) => !Number.isNaN(f.cpu))
    ? `${quantile(perGb, 0.5).toFixed(2)} CPU-s/GB (${perGb.map((v) => v.toFixed(2)).join(', ')}), `
    : '';
  return `${name}: ${cpu}${quantile(mbs, 0.5).toFixed(0)} MB/s (${mbs.map((v) => v.toFixed(0)).join(', ')})`;
}

const port = Number(process.env.SCRAPER_STREAM_CHECK_PORT ?? 3443);
if (listenersOn(port) !== '') {
  say(`something already listens on port ${port} (a runner or a test's stream check):\n${listenersOn(port)}`);
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'chronomap-bench-dl-'));
const ns = `chronomap-dl-${process.pid}`;
const link = `cmd${process.pid % 100000}`;
sh(`openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=download.example \
  -keyout ${dir}/key.pem -out ${dir}/cert.pem 2>/dev/null`);
sh(`ip netns add ${ns} && ip link add ${link}a type veth peer name ${link}b && ip link set ${link}b netns ${ns} &&
  ip addr add 198.18.0.1/24 dev ${link}a && ip link set ${link}a up &&
  ip netns exec ${ns} sh -c 'ip addr add ${WAN}/24 dev ${link}b && ip link set ${link}b up && ip link set lo up && ip route add default via 198.18.0.1'`);
const server = spawn(
  'ip',
  ['netns', 'exec', ns, 'python3', '-c', SERVER, `${dir}/cert.pem`, `${dir}/key.pem`],
  {
    stdio: 'inherit',
  },
);
const relay = spawn(process.execPath, ['-e', RELAY], { stdio: ['ignore', 'pipe', 'inherit'] });
const relayPort = await new Promise<number>((resolve) =>
  relay.stdout?.setEncoding('utf8').once('data', (line: string) => resolve(Number(line.trim()))),
);
const runner = await startRunner({ SCRAPER_STREAM_CHECK_PORT: String(port) });
const check = await startStreamCheck(port, await sandboxSubnets(runner.config));
const cleanup = async () => {
  await check.stop();
  await runner.runs.shutdown();
  await runner.app.close();
  relay.kill('SIGKILL');
  server.kill('SIGKILL');
  sh(`ip netns del ${ns}; ip link del ${link}a 2>/dev/null`);
  rmSync(dir, { recursive: true, force: true });
  rmSync(runner.dataDir, { recursive: true, force: true });
};

try {
  await new Promise((resolve) => setTimeout(resolve, 500)); // the server binds
  const checkPids = () => [check.pid, ...childrenOf(check.pid)];

  const inContainer = async (toPort: number, pids: () => number[]): Promise<Figure> => {
    const before = pids().length > 0 ? cpuOf(pids()) : Number.NaN; // NaN: nothing in the path
    const { json } = await postRun(runner.url, {
      run_id: randomUUID(),
      runtime: 'python',
      entrypoint: 'main.py',
      code: { 'main.py': CLIENT(toPort) },
      limits: { timeout_secs: 300 },
    });
    const cpu = cpuOf(pids()) - before;
    const [bytes, seconds] = String(json.stdout).trim().split(' ').map(Number);
    if (json.exit_code !== 0 || !bytes)
      throw new Error(`download failed: ${JSON.stringify(json).slice(0, 600)}`);
    return { cpu, seconds: seconds as number, bytes };
  };

  const onHost = (viaRelay: boolean): Figure => {
    const before = viaRelay ? cpuSeconds(relay.pid as number) : Number.NaN;
    const target = viaRelay ? `127.0.0.1:${relayPort}` : `${WAN}:4443`;
    const out = sh(
      `curl -sk -o /dev/null -w '%{size_download} %{time_total}' --connect-to download.example:443:${target} https://download.example/${SIZE_MB}`,
    ).stdout;
    const [bytes, seconds] = out.trim().split(' ').map(Number);
    if (!bytes) throw new Error(`curl failed: ${out}`);
    return {
      cpu: viaRelay ? cpuSeconds(relay.pid as number) - before : Number.NaN,
      seconds: seconds as number,
      bytes,
    };
  };

  const proxied: Figure[] = [];
  const direct: Figure[] = [];
  const relayed: Figure[] = [];
  const hostDirect: Figure[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    proxied.push(await inContainer(443, checkPids));
    direct.push(await inContainer(4443, () => []));
    relayed.push(onHost(true));
    hostDirect.push(onHost(false));
  }
  say(
    `${SIZE_MB} MB over TLS, ${ROUNDS} round(s), median (each round), load average ${loadavg()
      .map((v) => v.toFixed(2))
      .join(' ')} at the end, ${new Date().toISOString()}`,
  );
  say(`  ${summary('container, through the stream check (its process + helper)', proxied)}`);
  say(`  ${summary('baseline: host curl through a plain Node relay (socket.pipe)', relayed)}`);
  say(`  ${summary('container, direct (port 4443, not redirected)', direct)}`);
  say(`  ${summary('host curl, direct', hostDirect)}`);
} finally {
  await cleanup();
}
