#!/usr/bin/env node
// Entry point of the runner CLI. The sources are TypeScript run by Node's type stripping, so
// Node 24 or newer is required: say so plainly instead of failing on the first `import type`.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `chronomap-runner: Node.js 24 or newer is required (this is ${process.version}); run it through npm or node_modules/.bin/node\n`,
  );
  process.exit(1);
}
const { main } = await import('../src/main.ts');
await main();
