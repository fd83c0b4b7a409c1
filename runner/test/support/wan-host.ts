// An "internet" host for the sandbox tests: a network namespace of our own at 198.51.100.2
// (TEST-NET-2, not a range the firewall drops; not TEST-NET-3, which this build machine's
// proxy uses), routed through this host like any outside address. It serves:
//   TCP 8080: "hello from the outside";
//   TCP 443 and 80: "seen" once it has received anything (a TLS ClientHello, an HTTP request);
//   TCP 853 (DNS over TLS) and 53 (DNS over TCP): "seen" once it has received anything;
//   UDP 53 and 443 (QUIC): echo each datagram back.
import { spawn, spawnSync } from 'node:child_process';

export const WAN_ADDRESS = '198.51.100.2';

const server = `
import socket, threading
def tcp(port, greeting):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("${WAN_ADDRESS}", port)); s.listen(16)
    def serve(c):
        try:
            if greeting is None:
                c.settimeout(10)
                if c.recv(65536):
                    c.sendall(b"seen")
            else:
                c.sendall(greeting)
        finally:
            c.close()
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
def udp(port=53):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("${WAN_ADDRESS}", port))
    while True:
        data, peer = s.recvfrom(4096); s.sendto(data, peer)
for port, greeting in ((8080, b"hello from the outside"), (443, None), (80, None), (853, None), (53, None)):
    threading.Thread(target=tcp, args=(port, greeting), daemon=True).start()
threading.Thread(target=udp, args=(443,), daemon=True).start()
udp()
`;

/** Creates the namespace and starts its servers; returns a function that removes both. */
export function startWanHost(): () => void {
  const ns = `chronomap-wan-${process.pid}`;
  const link = `cmw${process.pid % 100000}`;
  const sh = (cmd: string) => spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });
  sh(`ip netns add ${ns} && ip link add ${link}a type veth peer name ${link}b && ip link set ${link}b netns ${ns} &&
  ip addr add 198.51.100.1/24 dev ${link}a && ip link set ${link}a up &&
  ip netns exec ${ns} sh -c 'ip addr add ${WAN_ADDRESS}/24 dev ${link}b && ip link set ${link}b up && ip link set lo up && ip route add default via 198.51.100.1'`);
  const child = spawn('ip', ['netns', 'exec', ns, '/usr/bin/python3', '-c', server], { stdio: 'ignore' });
  return () => {
    child.kill('SIGKILL');
    sh(`ip netns del ${ns}; ip link del ${link}a 2>/dev/null`);
  };
}
