// Starts the stream check (proxy.ts, main.ts) as a child process listening on the port the
// firewall's nat rules redirect the sandbox's TCP 443, 80 and 53 to. If it is not running the
// redirected connections are refused: the check fails closed. Several runners on one host each
// start their own on the same port (SO_REUSEPORT); one runner's exit leaves the others in place.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('./main.ts', import.meta.url));
const blockedHostsFile = fileURLToPath(new URL('../../../sandbox-blocked-hosts.txt', import.meta.url));

export interface StreamCheckProcess {
  /** The child's pid (the benchmarks read its CPU time). */
  pid: number;
  /** Refusals so far, as the child reported them. */
  refusals: Array<{ refused: string; address: string; port: number }>;
  stop(): Promise<void>;
}

/** Starts the stream check and resolves once it listens (rejects if it exits first). */
export function startStreamCheck(
  port: number,
  subnets: readonly string[],
  options: { onRefuse?: (line: string) => void; onExit?: (code: number | null) => void } = {},
): Promise<StreamCheckProcess> {
  const child: ChildProcess = spawn(process.execPath, [entry, String(port), blockedHostsFile, ...subnets], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '--disable-warning=ExperimentalWarning' },
  });
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
    child.on('exit', (code) => {
      reject(new Error(`the stream check exited (${code}): ${errors.trim()}`));
      options.onExit?.(code);
    });
    const process_: StreamCheckProcess = {
      pid: child.pid ?? 0,
      refusals,
      stop: () =>
        new Promise((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          child.kill('SIGTERM');
          child.stdin?.end();
        }),
    };
  });
}
