// Where a redirected connection was going. The firewall's nat REDIRECT rewrites the destination
// of the sandbox's TCP 443/80/53 to the stream check's port; the kernel keeps the original in
// the connection's conntrack entry, readable with getsockopt(SO_ORIGINAL_DST), which Node does
// not offer. A small Python helper (Python 3.8+, root) duplicates the accepted socket out of this
// process with pidfd_getfd(2) and reads it, with the socket's peer so the answer can be matched
// to the connection it is for.
// (TPROXY, which keeps the original destination as the socket's own address, is not usable:
// with bridge netfilter on, which the sandbox needs, the socket TPROXY assigns in the bridge's
// PREROUTING is dropped when the bridge hands the packet to IP, and the SYN finds no listener.)
import { spawn } from 'node:child_process';
import type net from 'node:net';
import { createInterface } from 'node:readline';
import type { Destination } from './proxy.ts';

const HELPER = `
import ctypes, os, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
pidfd = os.pidfd_open(int(sys.argv[1]))
for line in sys.stdin:
    try:
        fd = libc.syscall(438, pidfd, int(line), 0)  # pidfd_getfd
        if fd < 0:
            raise OSError(ctypes.get_errno(), "pidfd_getfd")
        s = socket.socket(fileno=fd)
        try:
            port, addr = struct.unpack_from("!2xH4s", s.getsockopt(socket.SOL_IP, 80, 16))  # SO_ORIGINAL_DST
            peer = s.getpeername()
        finally:
            s.close()
        print(socket.inet_ntoa(addr), port, peer[0], peer[1], flush=True)
    except (OSError, ValueError) as e:
        print("-", getattr(e, "errno", 0), flush=True)
`;

export interface OriginalDestinations {
  /** The original destination of `socket`, or undefined (not redirected, gone, not IPv4). */
  lookup(socket: net.Socket): Promise<Destination | undefined>;
  close(): void;
}

/** Starts the helper (one per stream-check process; lookups are answered in order). */
export function originalDestinations(python = 'python3'): OriginalDestinations {
  const child = spawn(python, ['-c', HELPER, String(process.pid)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting: Array<(line: string) => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.(line));
  child.on('exit', () => {
    for (const answer of waiting.splice(0)) answer('-');
  });
  return {
    lookup(socket) {
      const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
      if (fd === undefined || fd < 0 || child.exitCode !== null) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        waiting.push((line) => {
          const [address, port, peer, peerPort] = line.split(' ');
          const same =
            peer === socket.remoteAddress?.replace(/^::ffff:/, '') && Number(peerPort) === socket.remotePort;
          resolve(address !== '-' && same ? { address: address ?? '', port: Number(port) } : undefined);
        });
        child.stdin.write(`${fd}\n`);
      });
    },
    close: () => child.kill('SIGKILL'),
  };
}
