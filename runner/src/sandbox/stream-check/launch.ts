// Starts the stream check (proxy.ts) as a child process on 127.0.0.1:port with a transparent
// socket, the listener scripts/podman/firewall's TPROXY rules divert the sandbox's TCP 443, 80
// and 53 to. Node cannot set IP_TRANSPARENT, so a few lines of Python make the socket (as root,
// CAP_NET_ADMIN) and exec Node on main.ts with it as fd 3. If the process is not running, the
// diverted connections find no listener and are dropped: the check fails closed.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('./main.ts', import.meta.url));
export const blockedHostsFile = fileURLToPath(new URL('../../../sandbox-blocked-hosts.txt', import.meta.url));

const wrapper = `
import os, socket, sys
port, node = int(sys.argv[1]), sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.SOL_IP, 19, 1)  # IP_TRANSPARENT
s.bind(("127.0.0.1", port)); s.listen(1024)
os.dup2(s.fileno(), 3); os.set_inheritable(3, True)
os.execv(node, [node, *sys.argv[3:]])
`;

export interface StreamCheckProcess {
  /** Refusals so far, as the child reported them. */
  refusals: Array<{ refused: string; address: string; port: number }>;
  stop(): Promise<void>;
}

/** Starts the stream check and resolves once it listens (rejects if it exits first). */
export function startStreamCheck(
  port: number,
  options: { python?: string; onRefuse?: (line: string) => void } = {},
): Promise<StreamCheckProcess> {
  const child: ChildProcess = spawn(
    options.python ?? 'python3',
    ['-c', wrapper, String(port), process.execPath, entry, blockedHostsFile],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '--disable-warning=ExperimentalWarning' },
    },
  );
  const refusals: StreamCheckProcess['refusals'] = [];
  let errors = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (errors += c).slice(-4096));
  return new Promise((resolve, reject) => {
    let pending = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        const parsed = JSON.parse(line) as {
          listening?: true;
          refused?: string;
          address: string;
          port: number;
        };
        if (parsed.listening) resolve(process_);
        else if (parsed.refused !== undefined) {
          refusals.push({ refused: parsed.refused, address: parsed.address, port: parsed.port });
          options.onRefuse?.(line);
        }
      }
    });
    child.on('exit', (code) => reject(new Error(`the stream check exited (${code}): ${errors.trim()}`)));
    const process_: StreamCheckProcess = {
      refusals,
      stop: () =>
        new Promise((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          child.kill('SIGTERM');
        }),
    };
  });
}
