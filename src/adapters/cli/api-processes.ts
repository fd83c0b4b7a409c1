import cluster, { type Worker } from 'node:cluster';

// Several HTTP processes on one port (node:cluster): the primary accepts connections and hands them
// round-robin to its workers, each a whole API (its own pools; rate limits and quotas are shared
// through PostgreSQL). The primary serves no request itself.

type ApiProcessesOptions = {
  processes: number;
  /** Set in every worker's environment, so that a worker uses the database the primary resolved. */
  env: Record<string, string>;
  say: (line: string) => void;
};

type ApiProcesses = {
  /**
   * The address every worker listens on, once all of them listen. Rejects when a worker exits
   * while starting (bad configuration, database down; it printed why): the others are stopped.
   */
  ready: Promise<string>;
  /** SIGTERM to every worker; resolves when all have exited. */
  stop(): Promise<void>;
};

/** Forks the workers. Once all have listened, a worker that dies is replaced. */
export function startApiProcesses(options: ApiProcessesOptions): ApiProcesses {
  const listening = new Set<Worker>();
  const running = new Set<Worker>();
  let stopping = false;
  let started = false;

  const stop = async () => {
    stopping = true;
    const exits = [...running].map(
      (worker) => new Promise<void>((resolve) => worker.once('exit', () => resolve())),
    );
    for (const worker of running) worker.process.kill('SIGTERM');
    await Promise.all(exits);
  };

  const ready = new Promise<string>((resolve, reject) => {
    const fork = () => {
      const worker = cluster.fork(options.env);
      running.add(worker);
      worker.on('listening', (address) => {
        listening.add(worker);
        if (started) options.say(`API process ${worker.process.pid} listening`);
        if (!started && listening.size === options.processes) {
          started = true;
          const host = address.address.includes(':') ? `[${address.address}]` : address.address;
          resolve(`http://${host}:${address.port}`);
        }
      });
      worker.on('exit', (code, signal) => {
        running.delete(worker);
        const wasListening = listening.delete(worker);
        if (stopping) return;
        if (!started) {
          // Start-up failed (the worker printed why): no half-started service.
          void stop().then(() =>
            reject(new ApiProcessesError(`an API process exited with ${code ?? signal} while starting`)),
          );
          return;
        }
        options.say(`API process ${worker.process.pid} exited with ${code ?? signal}; starting another`);
        // A replacement that cannot start (database down) is retried, not forked in a tight loop.
        if (wasListening) fork();
        else setTimeout(() => stopping || fork(), 1000);
      });
    };
    for (let i = 0; i < options.processes; i += 1) fork();
  });
  return { ready, stop };
}

export class ApiProcessesError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApiProcessesError';
  }
}

export function isApiWorker(): boolean {
  return cluster.isWorker;
}
