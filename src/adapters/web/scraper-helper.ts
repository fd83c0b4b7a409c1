import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { create } from 'tar';
import { Type } from 'typebox';
import { errorResponses } from '../http/error-body.ts';
import { publicOrigin } from '../http/public-url.ts';

// The scraper helper package (runner/helpers/node, `@chronomap/scraper`, not published on npm)
// served as the tarball `npm pack` would make, so a fresh machine with only Node and npm can run
// `npx --yes --package "$CHRONOMAP_URL/scraper-helper.tgz" chronomap-scraper init my-scraper`
// (docs/scrapers.md). The package.json inside names the tarball's own URL (`chronomap.helperUrl`),
// which `init --runtime node` writes as the scaffold's dependency, so `npm install` there finds it
// too. Built per host from the files package.json lists (tar, the library npm itself uses), cached.

const CACHE_SIZE = 8;

async function packHelper(root: string, helperUrl: string): Promise<Buffer> {
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
      `${JSON.stringify({ ...published, chronomap: { helperUrl } }, null, 2)}\n`,
    );
    const chunks: Buffer[] = [];
    const stream = create({ gzip: true, cwd: staging, portable: true, mtime: new Date(0) }, ['package']);
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    return Buffer.concat(chunks);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
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
      const helperUrl = `${publicOrigin(request)}/scraper-helper.tgz`;
      let packed = cache.get(helperUrl);
      if (!packed) {
        if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        packed = packHelper(root, helperUrl);
        cache.set(helperUrl, packed);
        packed.catch(() => cache.delete(helperUrl));
      }
      return reply
        .type('application/gzip')
        .header('cache-control', 'no-cache')
        .send(await packed);
    },
  );
};
