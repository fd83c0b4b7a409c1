import { readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';

// The service image is built by scripts/podman/build-service-image, which copies APP_PARTS into the
// build context's app/ folder, and the Containerfile copies app/ whole. This checks, without podman,
// the one thing that has broken silently before: a directory the running service reads at start-up
// that the image does not get. (test/integration/service/service-image.test.ts builds and starts the image
// where podman is present.)
const root = path.resolve(import.meta.dirname, '../../..');
const directoriesReadAtRunTime = ['bin', 'src', 'web', 'migrations', 'config'];

t.test('the service image gets every directory the service reads at run time', async (t) => {
  const script = await readFile(path.join(root, 'scripts', 'podman', 'build-service-image'), 'utf8');
  const parts = /^APP_PARTS=\(([^)]*)\)$/m.exec(script)?.[1]?.split(/\s+/).filter(Boolean) ?? [];
  for (const directory of directoriesReadAtRunTime) {
    t.ok(parts.includes(directory), `${directory} is among the build script's APP_PARTS`);
  }
  // The scraper helpers the service hands out are read when first asked for, not at start-up.
  const helpers = /^HELPER_PARTS=\(([^)]*)\)$/m.exec(script)?.[1]?.split(/\s+/).filter(Boolean) ?? [];
  for (const part of [
    'runner/helpers/node/src',
    'runner/helpers/node/templates',
    'runner/helpers/python/chronomap',
  ])
    t.ok(helpers.includes(part), `${part} is among the build script's HELPER_PARTS`);
  const containerfile = await readFile(path.join(root, 'Containerfile'), 'utf8');
  const finalStage = containerfile.split(/^FROM /m).at(-1) ?? '';
  t.match(finalStage, /^COPY app\/ \/app\/$/m, 'and the Containerfile copies the whole app/ folder');
});
