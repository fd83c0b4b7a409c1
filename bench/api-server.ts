import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../src/adapters/config/environment.ts';

// Starts `chronomap api` for a benchmark on a free port and waits for its "listening on" line.

export async function startChronomapApi(
  env: Record<string, string>,
): Promise<{ base: string; child: ChildProcess; processes: number }> {
  const child = spawn(path.join(projectRoot, 'bin', 'chronomap'), ['api'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let processes = 1;
  const base = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`the API did not start:\n${seen}`)), 60_000);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = seen.match(/listening on (http:\/\/[^\s]+)/);
      if (match?.[1]) {
        processes = Number(seen.match(/\((\d+) processes/)?.[1] ?? 1);
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
    });
    child.on('exit', (code) => reject(new Error(`the API exited with ${code}:\n${seen}`)));
  });
  return { base, child, processes };
}
