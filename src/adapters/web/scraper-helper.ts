import { createHash } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import archiver from 'archiver';
import type { FastifyPluginAsync } from 'fastify';
import { create } from 'tar';
import { Type } from 'typebox';
import { NotFoundError } from '../../domain/errors.ts';
import { errorResponses } from '../http/error-body.ts';
import { publicOrigin } from '../http/public-url.ts';

// The scraper helper packages, not published on npm or PyPI, served so that a machine without a
// Chronomap checkout can start and run a scraper (docs/scrapers.md, the tutorial):
// - runner/helpers/node (`@chronomap/scraper`) as the tarball `npm pack` would make, for
//   `npx --yes --package "$CHRONOMAP_URL/scraper-helper.tgz" chronomap-scraper init my-scraper`.
//   The package.json inside names the tarball's own URL (`chronomap.helperUrl`), which
//   `init --runtime node` writes as the scaffold's dependency, so `npm install` there finds it
//   too, and the Python wheel's URL (`chronomap.pythonHelperUrl`) for a Python scaffold's README.
//   Built per host from the files package.json lists (tar, the library npm itself uses), cached.
// - runner/helpers/python (`chronomap.scraper`) as a wheel, for `pip install --no-index <url>`
//   in a virtual environment. A wheel, not an sdist: pip installs a wheel without building it,
//   so it needs no setuptools and no index. Written here (a zip with the fixed layout of the
//   wheel format: the files, then dist-info's METADATA, WHEEL and RECORD) from pyproject.toml's
//   fields, because the service has no Python build tools. pip only accepts a wheel whose URL
//   ends in its own file name (name-version-py3-none-any.whl), hence the file name in the path.

const CACHE_SIZE = 8;
const PYTHON_WHEEL_PREFIX = '/scraper-helper-python/';

async function packHelper(
  root: string,
  urls: { helperUrl: string; pythonHelperUrl: string },
): Promise<Buffer> {
  const source = path.join(root, 'runner', 'helpers', 'node');
  const manifest = JSON.parse(await readFile(path.join(source, 'package.json'), 'utf8')) as {
    files: string[];
    [key: string]: unknown;
  };
  const staging = await mkdtemp(path.join(os.tmpdir(), 'chronomap-helper-'));
  try {
    const pkg = path.join(staging, 'package');
    for (const entry of manifest.files)
      await cp(path.join(source, entry), path.join(pkg, entry), { recursive: true });
    const { devDependencies: _dev, scripts: _scripts, tap: _tap, ...published } = manifest;
    await writeFile(
      path.join(pkg, 'package.json'),
      `${JSON.stringify({ ...published, chronomap: urls }, null, 2)}\n`,
    );
    const chunks: Buffer[] = [];
    const stream = create({ gzip: true, cwd: staging, portable: true, mtime: new Date(0) }, ['package']);
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    return Buffer.concat(chunks);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

type PythonProject = { name: string; version: string; description: string; requiresPython: string };

/** The [project] fields of runner/helpers/python/pyproject.toml (one-line strings, as it says). */
async function pythonProject(root: string): Promise<PythonProject> {
  const text = await readFile(path.join(root, 'runner', 'helpers', 'python', 'pyproject.toml'), 'utf8');
  const table = /^\[project\]\n([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(text)?.[1] ?? '';
  const field = (key: string) => {
    const value = new RegExp(`^${key}\\s*=\\s*"([^"\\n]*)"`, 'm').exec(table)?.[1];
    if (value === undefined) throw new Error(`pyproject.toml: [project] has no one-line string ${key}`);
    return value;
  };
  return {
    name: field('name'),
    version: field('version'),
    description: field('description'),
    requiresPython: field('requires-python'),
  };
}

/** The wheel's file name (PEP 427: the name normalised with underscores, pure Python 3). */
function wheelName(project: PythonProject): string {
  return `${project.name.replace(/[-_.]+/g, '_')}-${project.version}-py3-none-any.whl`;
}

async function buildWheel(root: string, project: PythonProject): Promise<Buffer> {
  const packageDir = path.join(root, 'runner', 'helpers', 'python', 'chronomap');
  const files: [string, Buffer][] = [];
  for (const file of (await readdir(packageDir)).filter((name) => name.endsWith('.py')).sort())
    files.push([`chronomap/${file}`, await readFile(path.join(packageDir, file))]);
  const distInfo = `${project.name.replace(/[-_.]+/g, '_')}-${project.version}.dist-info`;
  files.push(
    [
      `${distInfo}/METADATA`,
      Buffer.from(
        `Metadata-Version: 2.1\nName: ${project.name}\nVersion: ${project.version}\n` +
          `Summary: ${project.description}\nRequires-Python: ${project.requiresPython}\n`,
      ),
    ],
    [
      `${distInfo}/WHEEL`,
      Buffer.from('Wheel-Version: 1.0\nGenerator: chronomap\nRoot-Is-Purelib: true\nTag: py3-none-any\n'),
    ],
  );
  // pip checks every installed file against RECORD's hash (urlsafe base64 SHA-256, no padding).
  const record = files.map(
    ([name, data]) =>
      `${name},sha256=${createHash('sha256').update(data).digest('base64url')},${data.length}\n`,
  );
  files.push([`${distInfo}/RECORD`, Buffer.from(`${record.join('')}${distInfo}/RECORD,,\n`)]);

  const zip = archiver('zip', { zlib: { level: 9 } });
  const chunks: Buffer[] = [];
  zip.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    zip.on('end', resolve);
    zip.on('error', reject);
  });
  // A fixed date, so the same files give the same wheel whenever it is built: zip's earliest,
  // 1980-01-01, in local time because zip stores local time (a UTC date would fall before 1980
  // west of Greenwich).
  for (const [name, data] of files) zip.append(data, { name, date: new Date(1980, 0, 1) });
  await zip.finalize();
  await done;
  return Buffer.concat(chunks);
}

export const scraperHelperRoutes: FastifyPluginAsync<{ root: string }> = async (app, { root }) => {
  const cache = new Map<string, Promise<Buffer>>();
  app.get(
    '/scraper-helper.tgz',
    {
      schema: {
        tags: ['scrapers'],
        summary: 'The scraper helper package (@chronomap/scraper) as an npm tarball',
        description:
          'For `npx --yes --package "$CHRONOMAP_URL/scraper-helper.tgz" chronomap-scraper init my-scraper` and as the ' +
          'dependency of a Node scaffold. Public.',
        response: { 200: Type.String({ contentMediaType: 'application/gzip' }), ...errorResponses(400) },
      },
    },
    async (request, reply) => {
      const origin = publicOrigin(request);
      const helperUrl = `${origin}/scraper-helper.tgz`;
      let packed = cache.get(helperUrl);
      if (!packed) {
        if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        packed = pythonProject(root).then((project) =>
          packHelper(root, {
            helperUrl,
            pythonHelperUrl: `${origin}${PYTHON_WHEEL_PREFIX}${wheelName(project)}`,
          }),
        );
        cache.set(helperUrl, packed);
        packed.catch(() => cache.delete(helperUrl));
      }
      return reply
        .type('application/gzip')
        .header('cache-control', 'no-cache')
        .send(await packed);
    },
  );

  // The same for every host (nothing in it names a URL): built once, on the first request, so a
  // service started without runner/ still starts.
  let wheel: Promise<{ name: string; data: Buffer }> | undefined;
  app.get(
    `${PYTHON_WHEEL_PREFIX}:wheel`,
    {
      schema: {
        tags: ['scrapers'],
        summary: 'The Python scraper helper (chronomap.scraper) as a wheel',
        description:
          'For `pip install --no-index "$CHRONOMAP_URL/scraper-helper-python/<wheel>"`, to run a scraper locally ' +
          '(docs/scrapers.md names the current file). Any other file name: 404. Public.',
        params: Type.Object({ wheel: Type.String({ maxLength: 200 }) }, { additionalProperties: false }),
        response: { 200: Type.String({ contentMediaType: 'application/zip' }), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      if (!wheel) {
        wheel = pythonProject(root).then(async (project) => ({
          name: wheelName(project),
          data: await buildWheel(root, project),
        }));
        wheel.catch(() => (wheel = undefined));
      }
      const built = await wheel;
      if ((request.params as { wheel: string }).wheel !== built.name)
        throw new NotFoundError(`this Chronomap serves ${built.name}`);
      return reply.type('application/zip').header('cache-control', 'no-cache').send(built.data);
    },
  );
};
