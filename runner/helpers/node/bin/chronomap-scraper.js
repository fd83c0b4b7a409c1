#!/usr/bin/env node
// chronomap-scraper init <directory> [--runtime python|node]
// Writes a new scraper project: scrapers.yml, a starter entrypoint using the helper library,
// .gitignore and README.md. Plain JavaScript so that `npx @chronomap/scraper init` works on
// any Node.js 18 or newer.
import { scaffold } from '../src/scaffold.mjs';

const usage = 'usage: chronomap-scraper init <directory> [--runtime python|node]';

function parse(argv) {
  const [command, ...rest] = argv;
  if (command !== 'init') throw new Error(usage);
  let runtime = 'python';
  const positional = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === '--runtime') runtime = rest[++i];
    else if (arg.startsWith('--runtime=')) runtime = arg.slice('--runtime='.length);
    else if (arg === '-h' || arg === '--help') throw new Error(usage);
    else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}\n${usage}`);
    else positional.push(arg);
  }
  if (positional.length !== 1) throw new Error(usage);
  if (runtime !== 'python' && runtime !== 'node')
    throw new Error(`--runtime must be python or node, got '${runtime}'`);
  return { directory: positional[0], runtime };
}

try {
  const { directory, runtime } = parse(process.argv.slice(2));
  const created = scaffold(directory, runtime);
  process.stdout.write(
    `created ${created.directory} (${runtime}):\n${created.files.map((f) => `  ${f}`).join('\n')}\n`,
  );
} catch (err) {
  process.stderr.write(`chronomap-scraper: ${err.message}\n`);
  process.exit(1);
}
