import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import {
  type Configuration,
  configureDraft,
  openDraft,
  startDraft,
  validateDraft,
  type WizardDeps,
} from '../../../application/ingest/import-wizard.ts';
import { previewUrl, type UrlPreviewDeps } from '../../../application/ingest/preview-url.ts';
import { parseIngestSettings } from '../../../domain/ingest/settings.ts';
import { errorResponses } from '../error-body.ts';
import { fileDoc } from './ingest-docs.ts';
import { SchemaPreview } from './ingest-schemas.ts';
import { draftDoc } from './wizard-docs.ts';
import { PREVIEW_CSV_PREFIX_BYTES, PREVIEW_TIME_BUDGET_MS } from './ingest-file-routes.ts';
import { viewerOf } from '../viewer.ts';
import {
  DraftCheck,
  DraftFromUrl,
  DraftSaved,
  DraftStart,
  DraftUploaded,
  DraftValidity,
} from './wizard-schemas.ts';

// The import wizard's JSON steps after `POST /api/ingest-files` with `start=false`: configure (store
// the settings, optionally start), validate-preview (check them against the file's first rows,
// nothing changes) and the schema preview of a URL. docs/ingestion.md, "The import wizard".

type WizardRouteOptions = { wizard: WizardDeps; urlPreview: UrlPreviewDeps };

const signedInAndLimited = { rateLimit: true, requiresUser: true } as const;
const NoQuery = Type.Object({}, { additionalProperties: false });
const configurationOf = (body: { settings?: unknown; dataset?: unknown }): Configuration | undefined =>
  body.settings === undefined && body.dataset === undefined
    ? undefined
    : { settings: body.settings, dataset: body.dataset };

export const ingestWizardRoutes: FastifyPluginAsync<WizardRouteOptions> = async (
  app,
  { wizard, urlPreview },
) => {
  const tags = ['ingestion'];
  app.post(
    '/api/ingest/configure',
    {
      config: signedInAndLimited,
      schema: {
        tags,
        summary: 'Store the settings of an upload that waits, and optionally start its import',
        description:
          'For an upload made with `start=false`. `settings` and `dataset` replace the stored configuration after ' +
          'checks against the file (sheet indexes, datasets of the catalog): 400 with `details` listing every problem, ' +
          'nothing stored. `start: true` validates the stored configuration against the first rows (as validate-preview) ' +
          'and starts the import: 201 with the ingest file, queued like any upload (quotas taken now). 404 for an upload ' +
          'that is not the caller’s, 409 IMPORT_ALREADY_STARTED or UPLOAD_EXPIRED.',
        querystring: NoQuery,
        body: DraftStart,
        response: {
          200: DraftSaved,
          201: DraftUploaded,
          ...errorResponses(400, 401, 403, 404, 409, 429),
        },
      },
    },
    async (request, reply) => {
      const body = request.body as { draft: number; settings?: unknown; dataset?: unknown; start?: boolean };
      const viewer = viewerOf(request);
      const configuration = configurationOf(body);
      let draft = configuration ? await configureDraft(wizard, viewer, body.draft, configuration) : null;
      if (!body.start) {
        draft ??= await openDraft(wizard, viewer, body.draft);
        return { draft: draftDoc(draft), message: 'Configuration stored' };
      }
      const created = await startDraft(
        wizard,
        viewer,
        body.draft,
        AbortSignal.timeout(PREVIEW_TIME_BUDGET_MS),
      );
      draft = (await wizard.drafts.get(body.draft)) ?? draft;
      return reply.status(201).send({
        doc: fileDoc(created.file, created.jobs),
        ...(draft ? { draft: draftDoc(draft) } : {}),
        message: 'Import started',
      });
    },
  );

  app.post(
    '/api/ingest/validate-preview',
    {
      config: signedInAndLimited,
      schema: {
        tags,
        summary: 'Check a configuration against an upload’s first rows, without changing anything',
        description:
          'The given settings (else the stored ones) against the file: every mapped column must be in its sheet, ' +
          'sheet indexes in range, datasets in the catalog. 200 `{valid, problems, sheets}` either way (problems per ' +
          'field: MISSING_COLUMN, SHEET_OUT_OF_RANGE, DATASET_NOT_IN_CATALOG, SHEET_UNREADABLE, settings errors), with ' +
          'the preview of each sheet as POST /api/ingest/preview answers it, with `rowCount` (every data row counted, ' +
          '`complete` false when the time budget ended the count). `drift`: each sheet into an existing dataset whose ' +
          "columns differ from the dataset's current schema, by the rule the pipeline's validate-schema applies " +
          '(`breaking`: the import will wait for approval there). `allowance`: the caller’s quotas against the file ' +
          '(uploads and import jobs today, file size, events per import, events left), each with what will happen ' +
          'and the numbers. 404 / 409 as configure.',
        querystring: NoQuery,
        body: DraftCheck,
        response: {
          200: DraftValidity,
          ...errorResponses(400, 401, 404, 409, 429),
        },
      },
    },
    async (request) => {
      const body = request.body as { draft: number; settings?: unknown; dataset?: unknown };
      const { draft, valid, problems, sheets, drift, allowance } = await validateDraft(
        wizard,
        viewerOf(request),
        body.draft,
        configurationOf(body),
        AbortSignal.timeout(PREVIEW_TIME_BUDGET_MS),
      );
      return {
        valid,
        problems,
        draft: draftDoc(draft),
        fileName: draft.originalName,
        format: draft.format,
        sheets,
        drift,
        allowance,
      };
    },
  );

  app.post(
    '/api/ingest/preview-url',
    {
      config: signedInAndLimited,
      schema: {
        tags,
        summary: 'Detected fields and mappings of a file at a URL, before a scheduled import is made',
        description:
          'Fetches `url` through the SSRF guard (private and reserved addresses refused, redirects checked again) within ' +
          'the scheduled fetches’ time limit: a CSV only up to its first MiB, a workbook up to 10 MiB. Answers as ' +
          'POST /api/ingest/preview; nothing is kept. A URL that cannot be fetched is a 400 naming why (SSRF_BLOCKED, ' +
          'URL_TIMEOUT, FILE_TOO_LARGE, TOO_MANY_REDIRECTS, URL_FETCH_FAILED).',
        querystring: NoQuery,
        body: DraftFromUrl,
        response: { 200: SchemaPreview, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => {
      const body = request.body as { url: string; settings?: { fieldMapping?: unknown } };
      const mapping = body.settings?.fieldMapping;
      const settings = parseIngestSettings(mapping ? { fieldMapping: mapping } : undefined, undefined);
      return previewUrl(
        urlPreview,
        { url: body.url, mapping: settings.fieldMapping, csvPrefixBytes: PREVIEW_CSV_PREFIX_BYTES },
        AbortSignal.timeout(PREVIEW_TIME_BUDGET_MS),
      );
    },
  );
};
