import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TapConfig } from '@tapjs/config';

// `tap build` first, as docs/development.md explains (after a fresh `npm ci` the first run would
// start its test processes with the old loaders), but only when the built test class's plugins are
// not the configured ones: the check is what tap's runner compares itself (pluginSignature), and a
// needless build costs about 6 s of CPU, a tenth of the fast tier.

const config = await TapConfig.load();
const built = readFileSync(fileURLToPath(import.meta.resolve('@tapjs/test/test-built')), 'utf8');
const signature = /export const signature = `([^`]*)`/.exec(built)?.[1]?.trim();
if (signature !== config.pluginSignature) {
  const env = { ...process.env, NODE_OPTIONS: '--disable-warning=ExperimentalWarning' };
  const { status } = spawnSync('tap', ['build'], { stdio: 'inherit', env });
  process.exitCode = status ?? 1;
}
