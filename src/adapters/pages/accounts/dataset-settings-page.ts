import type { FastifyPluginAsync } from 'fastify';
import {
  type CollectionDeps,
  updateDocument,
  writableDataset,
} from '../../../application/collections/collection-documents.ts';
import { ValidationError } from '../../../domain/errors.ts';
import type { Doc } from '../../../ports/collections/collection-repository.ts';
import { accountPages, hidden, recordId } from '../account-pages.ts';
import { csrfInput, type Form } from '../csrf.ts';
import { datasetDataLinks } from '../data-links.ts';
import { type Html, html } from '../html.ts';
import { flashFrom } from '../replies.ts';

// /account/datasets/{id}/settings (issue 38 §6): a dataset's location privacy and whether its
// events' provenance pages are public, for whoever may write the dataset (its owner, the owner of its
// catalog, admins: the access rule canWriteDataset via writableDataset; anyone else gets the 404
// page). The save is updateDocument, the use case of PATCH /api/datasets/{id}: the same rule, the
// same recompute (the settings trigger of migration 0880 stores every event's generalised location
// in the same transaction, so when the page comes back the new locations are already served).

type DatasetSettingsDeps = { collections: CollectionDeps; csrfSecret: string };

const path = (id: number) => `/account/datasets/${id}/settings`;

/** The limits of PATCH /api/datasets/{id} (collection-schemas.ts, PrivacyInput; the database checks them too). */
const METRES = { min: 10, max: 1_000_000 };
const MIN_COUNT = { min: 1, max: 1000 };

type PrivacySettings = {
  privacyCellMetres: number | null;
  privacyMinCount: number;
  provenancePublic: boolean;
};

function wholeNumber(form: Form, name: string, label: string, range: { min: number; max: number }): number {
  const raw = (form[name] ?? '').trim().replace(/[\s,_]/g, '');
  const value = /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= range.min && value <= range.max))
    throw new ValidationError(
      `${label} must be a whole number from ${range.min.toLocaleString('en')} to ${range.max.toLocaleString('en')}`,
      { field: name },
    );
  return value;
}

/** The form's settings; "off" lifts the generalisation (the minimum count is then kept, unused). */
function settingsFrom(form: Form, current: Doc): PrivacySettings {
  const privacy = form.privacy === 'on';
  return {
    privacyCellMetres: privacy ? wholeNumber(form, 'metres', 'The cell size', METRES) : null,
    privacyMinCount: privacy
      ? wholeNumber(form, 'minCount', 'The minimum count', MIN_COUNT)
      : Number(current.privacyMinCount ?? 1),
    provenancePublic: form.provenancePublic === 'yes',
  };
}

/** What someone without write access sees, in words, from the stored settings. */
function readerView(doc: Doc): Html {
  const metres = doc.privacyCellMetres as number | null;
  const k = Number(doc.privacyMinCount ?? 1);
  const location =
    metres === null
      ? html`<li id="reader-location">The exact location of every event.</li>`
      : html`<li id="reader-location">
          Each event at the centre of its ${metres.toLocaleString('en')} m × ${metres.toLocaleString('en')} m
          square, never its exact point, on the map, in the API, the tiles, the feeds and the exports.
          ${
            k > 1
              ? html`A square with fewer than ${k} of this dataset's events shows none of their locations (the
                events are still listed, without a place).`
              : ''
          }
          The columns the location was read from (latitude, longitude, address) are left out of the event's
          data.
        </li>`;
  return html`<ul>
    ${location}
    <li id="reader-provenance">
      ${
        doc.provenancePublic
          ? 'Each event links to its provenance page: the file, URL or scraper run it came from, when it was stored and changed.'
          : 'No provenance: the events do not say which file, URL or scraper run they came from.'
      }
    </li>
  </ul>`;
}

function settingsView(token: string, doc: Doc): Html {
  const id = Number(doc.id);
  const metres = doc.privacyCellMetres as number | null;
  return html`<h1>Settings of ${String(doc.title)}</h1>
    ${datasetDataLinks(String(doc.slug))}
    <h2>What people without write access see now</h2>
    <div class="card" id="reader-sees">
      ${readerView(doc)}
      <p class="muted">
        Whoever may write the dataset (you, the catalog's owner, admins) always sees the exact data.
      </p>
    </div>
    <h2>Location privacy and provenance</h2>
    <form method="post" action="${path(id)}" class="card" id="dataset-settings">
      ${csrfInput(token)}
      <h3>Location privacy</h3>
      <p>
        For events about people (a home, a sighting of a rare species), publish only an area. The generalised
        location is stored with each event and is all that anyone else can get, at every zoom and with any
        filter.
      </p>
      <p>
        <label class="check"
          ><input type="radio" name="privacy" value="off" ${metres === null ? 'checked' : ''} /> Off: exact
          locations</label
        >
        <label class="check"
          ><input type="radio" name="privacy" value="on" ${metres === null ? '' : 'checked'} /> Generalise
          locations</label
        >
      </p>
      <p>
        <label
          >Square size, metres (${METRES.min} to ${METRES.max.toLocaleString('en')})
          <input name="metres" inputmode="numeric" value="${String(metres ?? 1000)}" size="9"
        /></label>
      </p>
      <p>
        <label
          >Minimum events per square (${MIN_COUNT.min} to ${MIN_COUNT.max}; fewer: no location shown)
          <input name="minCount" inputmode="numeric" value="${String(doc.privacyMinCount ?? 1)}" size="5"
        /></label>
      </p>
      <h3>Provenance</h3>
      <p>
        <label class="check"
          ><input
            type="checkbox"
            name="provenancePublic"
            value="yes"
            ${doc.provenancePublic ? 'checked' : ''}
          />
          Show where each event came from (file name and hash, URL, scraper run) on its public provenance
          page</label
        >
      </p>
      <button type="submit" id="dataset-settings-save">Save settings</button>
    </form>`;
}

export const datasetSettingsPage: FastifyPluginAsync<DatasetSettingsDeps> = async (app, deps) => {
  const pages = accountPages(app, deps.csrfSecret, '/account/imports');

  app.get('/account/datasets/:id/settings', hidden, async (request, reply) => {
    const id = recordId((request.params as { id: string }).id);
    const user = pages.user(request, reply, path(id));
    if (!user) return reply;
    const doc = await writableDataset(deps.collections, user, id);
    const token = pages.csrf.token(request, reply);
    return pages.render(reply, 200, `Settings of ${String(doc.title)}`, settingsView(token, doc), {
      user,
      token,
      flash: flashFrom(request),
    });
  });

  // Back to this page, which shows what readers now see; a refused value comes back as its message.
  pages.action(
    '/account/datasets/:id/settings',
    (_user, id) => path(id),
    async (user, id, form) => {
      const current = await writableDataset(deps.collections, user, id);
      const saved = await updateDocument(deps.collections, 'datasets', user, id, settingsFrom(form, current));
      // True when said: the settings trigger recomputed every event's stored location in the save.
      return saved.privacyCellMetres === current.privacyCellMetres &&
        saved.privacyMinCount === current.privacyMinCount
        ? 'Saved. The locations were unchanged.'
        : "Saved. Every event's generalised location was recomputed with the change: readers see the new locations now.";
    },
  );
};
