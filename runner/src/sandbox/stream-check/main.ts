// The stream check's own process (started by launch.ts): listens on SCRAPER_STREAM_CHECK_PORT
// (all addresses, SO_REUSEPORT: every runner of the host starts one, the kernel spreads the
// connections over them) and writes one JSON line per refused connection to stdout.
// Usage: node main.ts PORT BLOCKED_HOSTS_FILE SUBNET...
import { readFileSync } from 'node:fs';
import { originalDestinations } from './original-destination.ts';
import { createStreamCheck } from './proxy.ts';

const [port, blockedFile, ...sources] = process.argv.slice(2);
const domains = readFileSync(blockedFile ?? '', 'utf8')
  .split('\n')
  .map((line) => line.trim().toLowerCase())
  .filter((line) => line !== '' && !line.startsWith('#'));
const destinations = originalDestinations();
const server = createStreamCheck({
  domains,
  sources,
  destinationOf: (socket) => destinations.lookup(socket),
  onRefuse: (destination, reason) =>
    process.stdout.write(`${JSON.stringify({ refused: reason, ...destination })}\n`),
});
server.on('error', (err) => {
  process.stderr.write(`stream-check: ${err.message}\n`);
  process.exit(1);
});
server.listen({ port: Number(port), host: '0.0.0.0', reusePort: true }, () =>
  process.stdout.write('{"listening":true}\n'),
);
const stop = () => {
  destinations.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop); // the runner is gone
process.stdin.resume();
