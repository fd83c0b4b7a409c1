// A broader Node scraper: child processes and shells, fs promises, workers, timers, zlib,
// crypto, DNS, fetch, sockets.
import { exec, execSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, writeFile, readFile, rm, stat, rename } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { gzipSync, gunzipSync } from 'node:zlib';
import { createHash, randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { connect } from 'node:net';
import { output } from '@chronomap/scraper';

await promisify(exec)('echo shell ok');
execSync('ls /scraper | wc -l');
spawnSync('node', ['-e', 'console.log(1)']);
const dir = await mkdtemp('/tmp/x-');
await writeFile(`${dir}/a`, gzipSync(randomBytes(1000)));
await rename(`${dir}/a`, `${dir}/b`);
gunzipSync(await readFile(`${dir}/b`));
await stat(`${dir}/b`);
await rm(dir, { recursive: true });
createHash('sha256').update('x').digest('hex');
await new Promise((resolve) => {
  const worker = new Worker(
    'const { parentPort } = require("node:worker_threads"); parentPort.postMessage(42);',
    { eval: true },
  );
  worker.on('message', resolve);
});
try {
  await lookup('localhost');
} catch {
  // nothing answers there: only the system calls matter
}
try {
  await fetch('http://198.51.100.78/', { signal: AbortSignal.timeout(500) });
} catch {
  // nothing answers there: only the system calls matter
}
await new Promise((resolve) => {
  const socket = connect({ host: '198.51.100.79', port: 80, timeout: 300 });
  socket.on('timeout', () => {
    socket.destroy();
    resolve();
  });
  socket.on('error', resolve);
});
await new Promise((resolve) => setTimeout(resolve, 20));
output.writeRow({ ok: true, pid: process.pid });
output.save();
