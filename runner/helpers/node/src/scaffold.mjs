// Writes a new scraper project from the templates next to this package. Refuses to touch a
// directory that already exists, so it can never overwrite someone's work.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const templates = fileURLToPath(new URL('../templates/', import.meta.url));
const packageRoot = fileURLToPath(new URL('../', import.meta.url));

/** What a Chronomap service wrote into the package it served (`chronomap`), else nothing. */
function servedUrls() {
  try {
    return JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')).chronomap ?? {};
  } catch {
    // No readable package.json: the other sources decide.
    return {};
  }
}

/**
 * Where a Node scaffold's `npm install` gets this package (it is not on the npm registry): the
 * tarball URL a Chronomap service wrote into the package it served (`chronomap.helperUrl`), else
 * `$CHRONOMAP_URL/scraper-helper.tgz`, else this copy on disk (a checkout of Chronomap).
 */
export function helperDependency(env = process.env) {
  const { helperUrl } = servedUrls();
  if (typeof helperUrl === 'string') return helperUrl;
  if (env.CHRONOMAP_URL) return `${env.CHRONOMAP_URL.replace(/\/+$/, '')}/scraper-helper.tgz`;
  return `file:${packageRoot.replace(/\/+$/, '')}`;
}

/**
 * How a Python scaffold's README runs the scraper locally: in a venv with the helper wheel the
 * service serves (`chronomap.pythonHelperUrl`, written with `helperUrl`), else, from a checkout
 * of Chronomap, with the checkout's module on the path.
 */
function pythonLocalRun() {
  const { pythonHelperUrl } = servedUrls();
  if (typeof pythonHelperUrl === 'string')
    return [
      'A virtual environment with the helper module `chronomap.scraper`, which your Chronomap serves',
      '(no package index needed), then the scraper with its Python:',
      '',
      '```sh',
      'python3 -m venv .venv',
      `.venv/bin/pip install -q --no-index "${pythonHelperUrl}"`,
      'CHRONOMAP_OUTPUT_DIR=. .venv/bin/python scraper.py',
      '```',
    ].join('\n');
  const checkout = fileURLToPath(new URL('../../python', import.meta.url)).replace(/\/+$/, '');
  return [
    'Python 3 with the helper module of the Chronomap checkout this project was made from on the path:',
    '',
    '```sh',
    `PYTHONPATH=${checkout} CHRONOMAP_OUTPUT_DIR=. python3 scraper.py`,
    '```',
  ].join('\n');
}

const RUNTIMES = {
  python: {
    entrypoint: 'scraper.py',
    files: { 'scraper.py': 'python/scraper.py' },
    writeRow: 'write_row',
    libraries: 'requests, beautifulsoup4, lxml, pandas, cssselect and `chronomap.scraper`',
    localRun: pythonLocalRun,
  },
  node: {
    entrypoint: 'scraper.mjs',
    files: { 'scraper.mjs': 'node/scraper.mjs', 'package.json': 'node/package.json' },
    writeRow: 'writeRow',
    libraries: 'cheerio, axios and `@chronomap/scraper`',
    localRun: () => '```sh\nnpm install\nnpm run scrape\n```',
  },
};

/** A slug the manifest accepts: lowercase letters, digits and hyphens, at most 128. */
export function slugify(text) {
  const slug = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 128);
  return slug || 'scraper';
}

export function scaffold(directory, runtime = 'python') {
  const kind = RUNTIMES[runtime];
  if (!kind) throw new Error(`runtime must be python or node, got '${runtime}'`);
  const target = resolve(directory);
  const name = basename(target);
  const values = {
    name,
    // A JSON string is a valid YAML scalar, whatever characters the name has.
    nameYaml: JSON.stringify(name),
    slug: slugify(name),
    runtime,
    entrypoint: kind.entrypoint,
    writeRow: kind.writeRow,
    libraries: kind.libraries,
    localRun: kind.localRun(),
    helperDependency: helperDependency(),
  };
  const fill = (text) => text.replace(/\{\{(\w+)\}\}/g, (_, key) => values[key]);
  const files = {
    'scrapers.yml': 'common/scrapers.yml',
    '.gitignore': 'common/gitignore',
    'README.md': 'common/README.md',
    ...kind.files,
  };
  try {
    // Not recursive for the last component: fails with EEXIST if the directory exists.
    mkdirSync(resolve(target, '..'), { recursive: true });
    mkdirSync(target);
  } catch (err) {
    if (err.code === 'EEXIST') throw new Error(`${directory} already exists; choose a new directory name`);
    throw err;
  }
  for (const [file, template] of Object.entries(files)) {
    writeFileSync(join(target, file), fill(readFileSync(join(templates, template), 'utf8')));
  }
  return { directory: target, files: Object.keys(files) };
}
