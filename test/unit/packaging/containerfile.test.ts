import { readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';

// The service image cannot be built on this machine (no registry to pull the base image from), so
// this checks the one thing that has broken silently before: a directory the running service reads
// at start-up that the final stage of the Containerfile does not copy.
const root = path.resolve(import.meta.dirname, '../../..');
const directoriesReadAtRunTime = ['bin', 'src', 'web', 'migrations', 'config'];

t.test('the final image stage copies every directory the service reads at run time', async (t) => {
  const containerfile = await readFile(path.join(root, 'Containerfile'), 'utf8');
  const stages = containerfile.split(/^FROM /m);
  const finalStage = stages.at(-1) ?? '';
  const copied = new Set(
    [...finalStage.matchAll(/^COPY (?!--from)(\S+) /gm)].map((match) => match[1]?.replace(/\/$/, '')),
  );
  for (const directory of directoriesReadAtRunTime) {
    t.ok(copied.has(directory), `COPY ${directory} in the final stage`);
  }
});
