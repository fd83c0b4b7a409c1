// The stream check's own process (started by launch.ts): serves the transparent listening
// socket it inherits as fd 3 (made by a small Python wrapper, since Node cannot set
// IP_TRANSPARENT) and writes one JSON line per refused connection to stdout.
import { readFileSync } from 'node:fs';
import { createStreamCheck } from './proxy.ts';

const [blockedFile] = process.argv.slice(2);
const domains = readFileSync(blockedFile ?? '', 'utf8')
  .split('\n')
  .map((line) => line.trim().toLowerCase())
  .filter((line) => line !== '' && !line.startsWith('#'));
const server = createStreamCheck({
  domains,
  onRefuse: (destination, reason) =>
    process.stdout.write(`${JSON.stringify({ refused: reason, ...destination })}\n`),
});
server.on('error', (err) => {
  process.stderr.write(`stream-check: ${err.message}\n`);
  process.exit(1);
});
server.listen({ fd: 3 }, () => process.stdout.write('{"listening":true}\n'));
process.on('SIGTERM', () => process.exit(0));
