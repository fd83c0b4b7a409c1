import type { FastifyPluginAsync } from 'fastify';
import {
  type GeocodingReport,
  geocodingReport,
  type PlacementFix,
  placeUnplacedRows,
  type UnplacedDeps,
  type UnplacedRow,
} from '../../../application/ingest/geocoding/unplaced-rows.ts';
import type { IngestFileProgress } from '../../../application/ingest/list-ingest-progress.ts';
import { DomainError, NotFoundError, ValidationError } from '../../../domain/errors.ts';
import type { GeocodeAlternative } from '../../../domain/ingest/geocoding/located-by.ts';
import { accountPages, formText, hidden } from '../account-pages.ts';
import { csrfInput, type Form } from '../csrf.ts';
import { type Html, html, trusted } from '../html.ts';
import { flashFrom, redirect } from '../replies.ts';

// An import job's geocoding outcome (issue 28 §5), /account/imports/jobs/{id}/geocoding: how many
// rows the geocoder placed, which it did not and why, the CSV of those, and the forms that place them
// by other columns (the same use cases as GET/POST /api/ingest-jobs/{id}/geocoding...).

const HOME = '/account/imports';
/** Rows shown on the page; the CSV has them all. */
const SHOWN = 200;
const ADDRESS_FIELDS = 3;
const STYLE = trusted(`
form.fix { border-top:1px dashed var(--line); margin-top:.75rem; padding-top:.5rem; }
form.fix h3 { margin:.25rem 0; font-size:1rem; }
`);

const pageOf = (id: number) => `${HOME}/jobs/${id}/geocoding`;

/** My imports' line for a job that looked addresses up: the stage's counts and the way here. */
export function geocodingSummary(job: IngestFileProgress['jobs'][number]): Html | '' {
  const counts = job.results?.geocoding as Record<string, number> | undefined;
  if (!counts) return '';
  const failed = (counts.notFound ?? 0) + (counts.lowConfidence ?? 0);
  return html`<p class="muted" data-field="geocoding-summary">
    Geocoding, by distinct address at import: ${String(counts.located ?? 0)} located,
    ${String(counts.notFound ?? 0)} not found, ${String(counts.lowConfidence ?? 0)} low confidence ·
    <a href="${pageOf(job.id)}">${failed ? 'Rows not placed and how to fix them' : 'Geocoding outcome'}</a>
  </p>`;
}

function reasonText(row: UnplacedRow): Html {
  if (row.reason === 'not-found') return html`not found`;
  const c = row.candidate;
  return html`low
  confidence${
    c
      ? html`: best candidate ${[c.name, c.region, c.country].filter(Boolean).join(', ')}
        (${c.confidence.toFixed(2)})${alternativesText(c.candidateCount, c.alternatives)}`
      : ''
  }`;
}

/** The places an ambiguous address may mean: "of 4 places: Portsmouth, Virginia, US; ...". */
function alternativesText(count: number | null, alternatives: GeocodeAlternative[]): Html | '' {
  if (count === null || count < 2) return '';
  return html`<span class="muted" data-field="alternatives">
    · one of ${String(count)} places:
    ${alternatives.map((a) => [a.name, a.region, a.country].filter(Boolean).join(', ')).join('; ')}</span
  >`;
}

function columnSelect(name: string, columns: string[], label: string): Html {
  return html`<label
    >${label}
    <select name="${name}" class="small">
      <option value="">—</option>
      ${columns.map((c) => html`<option value="${c}">${c}</option>`)}
    </select></label
  >`;
}

function fixForms(token: string, report: GeocodingReport): Html {
  const action = `${pageOf(report.jobId)}/place`;
  return html`<h2>Fix them</h2>
    <p class="muted">
      Only the rows listed are looked up again; rows already placed are never changed. The columns are those
      of the imported file.
    </p>
    <form method="post" action="${action}" class="stack fix" data-form="coordinates" style="max-width:none">
      ${csrfInput(token)}<input type="hidden" name="by" value="coordinates" />
      <h3>By coordinate columns</h3>
      <div class="row">
        ${columnSelect('latitude', report.columns, 'Latitude column')}
        ${columnSelect('longitude', report.columns, 'Longitude column')}
      </div>
      <div><button type="submit" class="small">Place by coordinates</button></div>
    </form>
    <form method="post" action="${action}" class="stack fix" data-form="address" style="max-width:none">
      ${csrfInput(token)}<input type="hidden" name="by" value="address" />
      <h3>By other address columns</h3>
      <p class="muted">Joined with commas in this order, such as city, region, country.</p>
      <div class="row">
        ${Array.from({ length: ADDRESS_FIELDS }, (_, i) =>
          columnSelect(`address.${i + 1}`, report.columns, `Address column ${i + 1}`),
        )}
      </div>
      <div><button type="submit" class="small">Look these addresses up</button></div>
    </form>`;
}

function outcomeView(token: string, report: GeocodingReport): Html {
  const { counts } = report;
  const id = report.jobId;
  if (!report.geocoded)
    return html`<h1>Geocoding of import job ${String(id)}</h1>
      <div class="card"><p>This job looked up no addresses (or has not stored its events yet).</p></div>`;
  return html`<style>
      ${STYLE}
    </style>
    <h1>Geocoding of import job ${String(id)}</h1>
    <div class="card">
      <p data-field="geocoding-counts">
        Of ${String(counts.rows)} rows located by their address:
        <b data-count="located">${String(counts.located)}</b> located,
        <b data-count="not-found">${String(counts.notFound)}</b> not found,
        <b data-count="low-confidence">${String(counts.lowConfidence)}</b> low confidence.
      </p>
      ${
        report.unplaced.length === 0
          ? html`<p>Every row is placed.</p>`
          : html`<p>
                <a
                  href="/api/ingest-jobs/${String(id)}/geocoding/unplaced.csv"
                  download
                  data-link="unplaced-csv"
                  >Download the rows not placed (CSV)</a
                >
              </p>
              <table aria-label="Rows not placed">
                <thead>
                  <tr>
                    <th>Row</th>
                    <th>Address</th>
                    <th>Why</th>
                  </tr>
                </thead>
                <tbody>
                  ${report.unplaced.slice(0, SHOWN).map(
                    (row) =>
                      html`<tr data-row="${String(row.row)}">
                        <td>${String(row.row)}</td>
                        <td>${row.address}</td>
                        <td>${reasonText(row)}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
              ${
                report.unplaced.length > SHOWN
                  ? html`<p class="muted">
                      The first ${String(SHOWN)} of ${String(report.unplaced.length)} rows; the CSV has them
                      all.
                    </p>`
                  : ''
              }
              ${fixForms(token, report)}`
      }
      <p><a href="${HOME}">Back to my imports</a></p>
    </div>`;
}

/** The fix the form asks for: coordinate columns, or the address columns chosen (empty ones left out). */
function fixFromForm(form: Form): PlacementFix {
  if (form.by === 'coordinates') {
    const latitude = formText(form, 'latitude', 255);
    const longitude = formText(form, 'longitude', 255);
    if (!latitude || !longitude) throw new ValidationError('choose a latitude and a longitude column');
    return { latitude, longitude };
  }
  const address = Array.from({ length: ADDRESS_FIELDS }, (_, i) => formText(form, `address.${i + 1}`, 255));
  if (address.every((name) => name === '')) throw new ValidationError('choose at least one address column');
  return { address: address.filter((name) => name !== '') };
}

function jobId(raw: string): number {
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(id)) throw new NotFoundError(`no import job ${raw.slice(0, 20)}`);
  return id;
}

export const geocodingOutcomePage: FastifyPluginAsync<{ ingest: UnplacedDeps; csrfSecret: string }> = async (
  app,
  { ingest, csrfSecret },
) => {
  const pages = accountPages(app, csrfSecret, HOME);

  app.get(`${HOME}/jobs/:id/geocoding`, hidden, async (request, reply) => {
    const id = jobId((request.params as { id: string }).id);
    const user = pages.user(request, reply, pageOf(id));
    if (!user) return reply;
    const token = pages.csrf.token(request, reply);
    const report = await geocodingReport(ingest, user, id);
    return pages.render(reply, 200, 'Geocoding outcome', outcomeView(token, report), {
      user,
      token,
      flash: flashFrom(request),
    });
  });

  // Answered on the job's page itself (the account pages' actions go back to one fixed page).
  pages.action(`${HOME}/jobs/:id/geocoding/place`, HOME, async (user, id, form, reply) => {
    try {
      const result = await placeUnplacedRows(ingest, user, id, fixFromForm(form));
      const more = result.notAsked ? ` ${result.notAsked} addresses are left to look up: submit again.` : '';
      const left = result.counts.notFound + result.counts.lowConfidence;
      redirect(reply, pageOf(id), { notice: `Placed ${result.placed} rows; ${left} not placed.${more}` });
    } catch (error) {
      if (!(error instanceof DomainError) || error.kind === 'not_found') throw error;
      redirect(reply, pageOf(id), { error: error.message });
    }
    return '';
  });
};
