import type { FastifyPluginAsync } from 'fastify';
import { getProvenancePage } from '../../../application/read/event-provenance.ts';
import { NotFoundError } from '../../../domain/errors.ts';
import type { ProvenanceSource, ShownProvenance } from '../../../domain/read/provenance.ts';
import type { EventProvenanceReader } from '../../../ports/read/event-provenance.ts';
import { type Html, html } from '../html.ts';
import { viewerOf } from '../viewer.ts';

// The public provenance page of an event, /events/{id}/provenance (issue 38 §5), server-rendered
// without scripts: where the event came from, linked from the Explore page's event details. 404
// (an HTML page) for an event the viewer may not read and for one whose dataset hides provenance.

const STYLE = `body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2933;background:#f5f7fa}
main{max-width:760px;margin:2rem auto;padding:0 1.5rem}h1{font-size:1.5rem;margin:0 0 .25rem}
.card{background:#fff;border:1px solid #d9e2ec;border-radius:10px;padding:1.25rem 1.5rem;margin:1rem 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.4rem 1.25rem;margin:0}dt{color:#616e7c}
dd{margin:0;overflow-wrap:anywhere}code{font:13px ui-monospace,Menlo,monospace}a{color:#2f6fde}`;

const CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

const IdParams = {
  type: 'object',
  properties: { id: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } },
  required: ['id'],
  additionalProperties: false,
} as const;

function document(title: string, body: Html): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Chronomap</title>
        <style>
          ${STYLE}
        </style>
      </head>
      <body>
        <main>${body}</main>
      </body>
    </html>`.text;
}

const item = (term: string, value: Html | string | number | null | undefined) =>
  value === null || value === undefined || value === ''
    ? ''
    : html`<dt>${term}</dt>
        <dd>${value}</dd>`;

function sourceItems(source: ProvenanceSource): Html {
  const hash = source.sha256 ? html`<code>${source.sha256}</code>` : null;
  if (source.kind === 'upload') {
    return html`${item('Source', 'An uploaded file')}${item('File', source.fileName)}${item('SHA-256', hash)}`;
  }
  if (source.kind === 'url') {
    return html`${item('Source', source.trigger === 'webhook' ? 'A URL import (webhook)' : 'A scheduled URL import')}
    ${item('URL', source.url ? html`<code>${source.url}</code>` : null)}${item('Fetched', source.fetchedAt)}
    ${item('ETag', source.etag ? html`<code>${source.etag}</code>` : null)}${item('Last-Modified', source.lastModified)}
    ${item('File', source.fileName)}${item('SHA-256', hash)}`;
  }
  return html`${item('Source', 'A scraper run')}${item('Run', source.runId ? html`<code>${source.runId}</code>` : null)}
  ${item('Commit', source.commit ? html`<code>${source.commit}</code>` : null)}${item('File', source.fileName)}
  ${item('SHA-256', hash)}`;
}

function provenanceView(
  event: { id: number; title: string | null; dataset: { title: string } },
  p: ShownProvenance,
) {
  const title = event.title ?? `Event ${event.id}`;
  return document(
    `Provenance of ${title}`,
    html`<h1>Provenance of ${title}</h1>
      <p>Event ${event.id} in the dataset <b>${event.dataset.title}</b>.</p>
      <section class="card" aria-label="Source">
        <dl>
          ${p.source ? sourceItems(p.source) : item('Source', 'Not recorded (not stored by an import)')}
          ${item('Import job', p.importJob)}
          ${item('Sheet', p.sheet && p.sheet.name !== null ? `${p.sheet.name} (sheet ${p.sheet.index + 1})` : null)}
          ${item('Row', p.row)} ${item('Stored', p.storedAt)} ${item('Last changed', p.changedAt)}
        </dl>
      </section>
      <p><a href="/api/v1/events/${event.id}">This event as JSON</a> · <a href="/">Explore</a></p>`,
  );
}

export const provenancePage: FastifyPluginAsync<{ provenance: EventProvenanceReader }> = async (
  app,
  deps,
) => {
  app.get<{ Params: { id: number } }>(
    '/events/:id/provenance',
    { schema: { hide: true, params: IdParams } },
    async (request, reply) => {
      reply
        .type('text/html; charset=utf-8')
        .header('Cache-Control', 'no-store')
        .header('X-Frame-Options', 'DENY')
        .header('Content-Security-Policy', CSP);
      try {
        const { event, provenance } = await getProvenancePage(deps, viewerOf(request), request.params.id);
        return reply.send(provenanceView(event, provenance));
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
        return reply.status(404).send(
          document(
            'Not found',
            html`<h1>Not found</h1>
              <p>This event has no public provenance.</p>`,
          ),
        );
      }
    },
  );
};
