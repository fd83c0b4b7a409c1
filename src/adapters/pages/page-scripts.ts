import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { projectRoot } from '../config/environment.ts';
import { JAVASCRIPT, serveFolder } from '../web/static-files.ts';
import { type Html, html } from './html.ts';

// The pages' browser code: ES modules in web/account/ (type-checked by web/tsconfig.json, linted
// like web/explore/), served from /account/assets/ and loaded by `<script type="module" src>`, so
// a page's Content-Security-Policy allows scripts of this origin only and never inline code.
// What a script needs from the server travels as data (data- attributes, `jsonData`), never as code.

const SCRIPTS = [
  'copy-buttons.js',
  'import-wizard.js',
  'ingest-progress.js',
  'scheduled-import-preview.js',
  'scraper-watch.js',
] as const;
type PageScript = (typeof SCRIPTS)[number];

const PAGE_SCRIPTS_URL = '/account/assets';

/** A "Copy" button for the input or textarea `fieldId` (hidden until copy-buttons.js runs). */
export function copyButton(fieldId: string): Html {
  return html`<button type="button" class="small secondary" data-copy="${fieldId}" hidden>Copy</button>`;
}

/** The tag that loads one of the pages' scripts (its page answers with `htmlReply`'s `scripts`). */
export function pageScript(name: PageScript): Html {
  return html`<script type="module" src="${PAGE_SCRIPTS_URL}/${name}"></script>`;
}

export const pageScriptRoutes: FastifyPluginAsync = async (app) => {
  const types = Object.fromEntries(SCRIPTS.map((name) => [name, JAVASCRIPT]));
  serveFolder(app, path.join(projectRoot, 'web', 'account'), PAGE_SCRIPTS_URL, types);
};
