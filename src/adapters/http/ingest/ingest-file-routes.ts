import path from 'node:path';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { assertImportAllowed } from '../../../application/ingest/import-allowance.ts';
import { getIngestProgress } from '../../../application/ingest/get-ingest-progress.ts';
import { accessibleFile, type ImportAccessDeps } from '../../../application/ingest/import-access.ts';
import { previewIngestSchema } from '../../../application/ingest/preview-ingest-schema.ts';
import type { IngestDeps } from '../../../application/ingest/run-ingest-job.ts';
import type { ScheduleDeps } from '../../../application/ingest/scheduled-ingests.ts';
import { uploadIngestFile } from '../../../application/ingest/upload-ingest-file.ts';
import { draftIngestFile, type WizardDeps } from '../../../application/ingest/import-wizard.ts';
import { draftDoc } from './wizard-docs.ts';
import { viewerOf } from '../viewer.ts';
import { DomainError, ValidationError } from '../../../domain/errors.ts';
import { IngestFailure } from '../../../domain/ingest/failures.ts';
import { parseIngestSettings } from '../../../domain/ingest/settings.ts';
import { withPayloadField } from './payload-form.ts';
import type { ImportRequest } from '../../../domain/ingest/import-allowance.ts';
import type { FileStore } from '../../../ports/ingest/file-store.ts';
import type { Geocoder } from '../../../ports/ingest/geocoder.ts';
import type { FileFormat } from '../../../domain/ingest/imports.ts';
import type { Quotas } from '../../../ports/accounts/quotas.ts';
import { requireUser } from '../authentication.ts';
import { parseJsonField, refuseForbiddenField, strictId } from '../input-guards.ts';
import { errorResponses } from '../error-body.ts';
import { USER_SECURITY } from '../openapi-document.ts';
import { USER_ONLY } from '../require-user.ts';
import { fileDoc } from './ingest-docs.ts';
import { PreviewForm, SchemaPreview, UploadForm } from './ingest-schemas.ts';
import { IdParams, RecordId } from '../schemas.ts';

export type IngestHttpDeps = Pick<IngestDeps, 'store' | 'queue' | 'clock' | 'retry' | 'files'> & {
  quotas: Quotas;
  /** Where uploads are streamed to: the one place that names where ingest files live. */
  fileStore: FileStore;
  maxFileSizeBytes: number;
  /** The catalog > dataset facts the access rules ask about (the collections' repository). */
  hierarchy: ImportAccessDeps['hierarchy'];
  schedules: ScheduleDeps;
  /** The configured geocoder chain, for POST /api/geocoding/test (none: geocoding is off). */
  geocoder?: Geocoder | null;
  /** The import wizard's uploads that wait for their configuration (`start=false`). */
  wizard?: WizardDeps;
};

const FORMATS: Record<string, FileFormat> = {
  '.csv': 'csv',
  '.tsv': 'csv',
  '.txt': 'csv',
  '.xlsx': 'xlsx',
  '.ods': 'ods',
};
const MB = 1024 * 1024;
/** What the preview reads of a CSV: its first MiB, cut back to the last whole line. */
export const PREVIEW_CSV_PREFIX_BYTES = MB;
/** A workbook has no usable prefix (its directory is at the end): the preview reads one up to 10 MiB. */
const PREVIEW_WORKBOOK_MAX_BYTES = 10 * MB;
/** How long the preview may spend reading rows once the file is received. */
export const PREVIEW_TIME_BUDGET_MS = 5_000;

/**
 * Passes the chunks on and fails as soon as they exceed the limit: busboy's own limit only drops
 * the excess and waits for the part to end, which for a 2 GB upload is 2 GB later.
 */
async function* withinLimit(file: AsyncIterable<Buffer>, limit: number): AsyncGenerator<Buffer> {
  let bytes = 0;
  for await (const chunk of file) {
    bytes += chunk.length;
    if (bytes > limit) throw payloadTooLarge(limit);
    yield chunk;
  }
}

export const ingestRoutes: FastifyPluginAsync<{ ingest: IngestHttpDeps }> = async (app, { ingest }) => {
  await app.register(multipart, {
    limits: {
      fileSize: ingest.maxFileSizeBytes + 1,
      files: 1,
      fields: 10,
      fieldSize: 1024 * 1024,
      parts: 12,
    },
    throwFileSizeLimit: true,
  });

  app.post(
    '/api/ingest-files',
    {
      schema: {
        tags: ['ingestion'],
        summary: 'Upload a file to import',
        description:
          'multipart/form-data with `file` (CSV: any delimiter, UTF-8 with or without BOM, or Latin-1; or an XLSX/ODS workbook, ' +
          'one ingest job per sheet), `catalog` (catalog id), ' +
          'optional `dataset` (dataset id or "new", default new) and optional `settings` (JSON: fieldMapping {timestamp, latitude, ' +
          'longitude, coordinates, address, title, id}, idStrategy external-id|content-hash|auto, duplicateHandling skip|update, ' +
          'geocoding true|false, schemaMode strict|additive|flexible, sheets [{sheetIndex, dataset}]). The file streams to disk; ' +
          'one larger than the upload limit is refused with 413 while it streams. Answers 201 with the ingest file and queues one ' +
          'ingest job per sheet. Needs a logged-in user (401 otherwise); counts against fileUploadsPerDay and, per sheet, ' +
          'importJobsPerDay, all or nothing (403 quota_exceeded, nothing taken). The quotas, the request rate limit and the ' +
          "size limit of the uploader's trust level (maxFileSizeMB) are checked before a byte of the body is read (403, 429, " +
          '413) and the size again while the file streams (413, partial file deleted). With the field `start=false` the ' +
          'file waits for POST /api/ingest/configure instead (201 `{draft}`: the import wizard, docs/ingestion.md); a draft ' +
          'takes its fileUploadsPerDay when stored (its start then takes only importJobsPerDay) and its size of ' +
          'draftStorageMB until it starts or expires; an account whose drafts fill draftStorageMB is refused any upload ' +
          '(403 quota_exceeded) before the body is read. Payload clients (@payloadcms/sdk create with a file) may send these ' +
          'fields as one JSON field `_payload` instead; a field given both ways is a 400.',
        consumes: ['multipart/form-data'],
        documentedBody: UploadForm,
        // The handler checks the caller (signedIn) so that its 401 can close the connection.
        security: USER_SECURITY,
        response: {
          201: Type.Union([
            Type.Object({ doc: Type.Ref('IngestFileDoc'), message: Type.String() }),
            Type.Object({ draft: Type.Ref('IngestDraftDoc'), message: Type.String() }),
          ]),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429),
        },
      },
      config: { rateLimit: true },
    },
    async (request, reply) => {
      const userId = signedIn(request, reply);
      // The body may make the upload a draft (start=false), which takes draft storage: an account
      // whose drafts fill its draftStorageMB is refused here, before the body is read.
      const limit = await limitsBeforeBody(reply, ingest, userId, {
        sheets: 1,
        upload: true,
        ...(ingest.wizard ? { draftMB: 1 } : {}),
      });
      const { fields: formFields, stored } = await receiveUpload(request, reply, ingest, {
        limitBytes: limit,
      });
      try {
        // Payload's upload form: the data in one JSON field `_payload` (payload-form.ts).
        const fields = withPayloadField(formFields);
        const catalogId = strictId(fields.catalog ?? fields.catalogId);
        if (catalogId === null) {
          throw new ValidationError('catalog must be a catalog id', { field: 'catalog' });
        }
        const settings = fields.settings ? parseJsonField(fields.settings, 'settings') : undefined;
        if (fields.start === 'false' && ingest.wizard) {
          // The import wizard's upload: the file waits for POST /api/ingest/configure (ingest-wizard.ts).
          const draft = await draftIngestFile(ingest.wizard, viewerOf(request), {
            catalogId,
            originalName: stored.name,
            storedPath: stored.storedPath,
            sizeBytes: stored.bytes,
            sha256: stored.sha256,
            mimeType: stored.mime || null,
            format: stored.format,
            sheets: await sheetsOf(ingest, stored),
            configuration: { settings, dataset: fields.dataset },
          });
          return reply
            .status(201)
            .send({ draft: draftDoc(draft), message: 'Uploaded; configure and start it' });
        }
        const created = await uploadIngestFile(
          { store: ingest.store, queue: ingest.queue, quotas: ingest.quotas, hierarchy: ingest.hierarchy },
          viewerOf(request),
          {
            originalName: stored.name,
            storedPath: stored.storedPath,
            sizeBytes: stored.bytes,
            mimeType: stored.mime || null,
            format: stored.format,
            source: 'upload',
            catalogId,
            settings: parseIngestSettings(settings, fields.dataset),
            sheets: await sheetsOf(ingest, stored),
            origin: { sha256: stored.sha256 },
          },
        );
        return reply
          .status(201)
          .send({ doc: fileDoc(created.file, created.jobs), message: 'Ingest file created' });
      } catch (error) {
        await ingest.fileStore.remove(stored.storedPath);
        throw error;
      }
    },
  );

  app.post(
    '/api/ingest/preview',
    {
      schema: {
        tags: ['ingestion'],
        summary: 'Detected fields and mappings of a file, before anything is written',
        description:
          'multipart/form-data with `file` and optional `settings` (JSON, its `fieldMapping` is applied as on upload). ' +
          'Reads the first 1,000 rows of each sheet and answers the detected field types and timestamp, coordinate, ' +
          'address, title and id columns, with the first rows. The file is deleted afterwards; no record is created. ' +
          'Needs a logged-in user (401 otherwise) and counts against the request rate limit (429). Reads at most the first ' +
          'MiB of a CSV (cut back to its last whole line; a first line longer than that is a 400 PREVIEW_LINE_TOO_LONG) ' +
          "and a workbook of at most 10 MiB and the uploader's maxFileSizeMB (413), and spends at most 5 s on its rows " +
          '(a sheet past the budget says so in `problem`).',
        consumes: ['multipart/form-data'],
        documentedBody: PreviewForm,
        security: USER_SECURITY,
        response: { 200: SchemaPreview, ...errorResponses(400, 401, 413, 429) },
      },
      config: { rateLimit: true },
    },
    async (request, reply) => {
      const userId = signedIn(request, reply);
      const limit = await limitsBeforeBody(reply, ingest, userId, { sheets: 0, upload: false });
      const { fields, stored } = await receiveUpload(request, reply, ingest, {
        limitBytes: Math.min(limit, PREVIEW_WORKBOOK_MAX_BYTES),
        declaredLimitBytes: limit,
        csvPrefixBytes: PREVIEW_CSV_PREFIX_BYTES,
      });
      try {
        const mapping = fields.settings
          ? (parseJsonField(fields.settings, 'settings') as { fieldMapping?: unknown } | null)?.fieldMapping
          : undefined;
        const settings = parseIngestSettings(mapping ? { fieldMapping: mapping } : undefined, undefined);
        const sheets = await previewIngestSchema(
          { files: ingest.files },
          { storedPath: stored.storedPath, format: stored.format },
          await sheetsOf(ingest, stored),
          settings.fieldMapping,
          AbortSignal.timeout(PREVIEW_TIME_BUDGET_MS),
        );
        return { fileName: stored.name, format: stored.format, sheets };
      } finally {
        await ingest.fileStore.remove(stored.storedPath);
      }
    },
  );

  app.get(
    '/api/ingest-files/:id',
    {
      config: USER_ONLY,
      schema: {
        tags: ['ingestion'],
        summary: 'An ingest file with its jobs',
        params: IdParams,
        querystring: Type.Object({}, { additionalProperties: false }),
        description: 'For its uploader, the owner of its catalog and admins; 404 for anyone else.',
        response: { 200: Type.Ref('IngestFileDoc'), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: number };
      const file = await accessibleFile(ingest, viewerOf(request), id);
      return fileDoc(file, await ingest.store.jobsOfFile(id));
    },
  );

  const progressRoute = (variant: 'ingest' | 'import') => {
    const param = variant === 'ingest' ? 'ingestId' : 'importId';
    app.get(
      `/api/${variant}/:${param}/progress`,
      {
        config: USER_ONLY,
        schema: {
          tags: ['ingestion'],
          summary:
            variant === 'ingest'
              ? 'Progress of an ingest file'
              : 'Progress of an import file (earlier variant)',
          params: Type.Object({ [param]: RecordId }, { additionalProperties: false }),
          querystring: Type.Object({}, { additionalProperties: false }),
          response: {
            200: Type.Ref(variant === 'ingest' ? 'IngestProgress' : 'ImportProgress'),
            ...errorResponses(400, 401, 404),
          },
        },
      },
      async (request) => {
        const id = (request.params as Record<string, number>)[param] as number;
        return getIngestProgress(ingest, viewerOf(request), id, variant);
      },
    );
  };
  progressRoute('ingest');
  progressRoute('import');
};

/**
 * Uploads need a logged-in user (the spec: protected API access needs an authenticated session, and
 * fileUploadsPerDay is a per-user quota). Refused before a byte of the body is read or stored.
 */
function signedIn(request: FastifyRequest, reply: FastifyReply): number {
  const viewer = viewerOf(request);
  if (viewer) return viewer.id;
  reply.header('connection', 'close');
  return requireUser(request).id;
}

/**
 * What the caller may send, decided before a byte of the body is read (the one decision of
 * application/ingest/import-allowance.ts): the quotas the request would take must have room
 * (taken when the file is recorded), and the largest file is the smaller of the service's and the
 * caller's trust level's maxFileSizeMB.
 */
async function limitsBeforeBody(
  reply: FastifyReply,
  ingest: IngestHttpDeps,
  userId: number,
  request: ImportRequest,
): Promise<number> {
  try {
    return (await assertImportAllowed(ingest, userId, request)).maxFileBytes;
  } catch (error) {
    // The body is never read: the connection closes after the answer.
    reply.header('connection', 'close');
    throw error;
  }
}

type StoredUpload = {
  storedPath: string;
  name: string;
  mime: string;
  format: FileFormat;
  bytes: number;
  sha256: string;
};

/**
 * Streams the multipart upload's one file to disk under the size limit and collects its fields. A
 * declared Content-Length over the limit is refused before the body is read; a longer stream is cut
 * off as soon as it passes the limit (413, connection closed, partial file removed).
 */
async function receiveUpload(
  request: FastifyRequest,
  reply: FastifyReply,
  ingest: IngestHttpDeps,
  limits: {
    /** The largest file accepted (413 beyond it). */
    limitBytes: number;
    /** The largest declared Content-Length accepted (default limitBytes). */
    declaredLimitBytes?: number;
    /** Keep only this much of a CSV, cut back to its last whole line, and read no further. */
    csvPrefixBytes?: number;
  },
): Promise<{ fields: Record<string, string>; stored: StoredUpload }> {
  if (!request.isMultipart()) {
    throw new DomainError('validation', 'send the file as multipart/form-data', {
      code: 'NOT_MULTIPART',
    });
  }
  const declared = Number(request.headers['content-length'] ?? Number.NaN);
  const declaredLimit = limits.declaredLimitBytes ?? limits.limitBytes;
  if (Number.isFinite(declared) && declared > declaredLimit + 2 * MB) {
    // Refused before a byte of the body is read.
    reply.header('connection', 'close');
    throw payloadTooLarge(declaredLimit);
  }
  // Null prototype: a field named __proto__ must not reach Object.prototype (and is refused).
  const fields = Object.create(null) as Record<string, string>;
  let stored: StoredUpload | null = null;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        refuseForbiddenField(part.fieldname);
        fields[part.fieldname] = String(part.value);
        continue;
      }
      if (part.fieldname !== 'file' || stored) {
        part.file.resume();
        throw new ValidationError('send exactly one file, in the field "file"', { field: 'file' });
      }
      const name = path.basename(part.filename || 'upload.csv').slice(0, 255);
      const format = FORMATS[path.extname(name).toLowerCase()];
      if (!format) {
        part.file.resume();
        throw new DomainError(
          'validation',
          `"${name}" is not a CSV file (.csv, .tsv, .txt) or workbook (.xlsx, .ods)`,
          {
            code: 'UNSUPPORTED_FORMAT',
          },
        );
      }
      const extension = path.extname(name);
      if (limits.csvPrefixBytes !== undefined && format === 'csv') {
        const prefix = await csvPrefix(part.file, limits.csvPrefixBytes);
        const written = await ingest.fileStore.writeNew('upload', extension, prefix.bytes);
        stored = { ...written, name, mime: part.mimetype, format };
        if (prefix.cut) {
          // The rest of the body is not read: the connection closes after the answer.
          reply.header('connection', 'close');
          return { fields, stored };
        }
        continue;
      }
      // The size limit applies while streaming: the upload stops (413) before it can fill the disk,
      // and the rest of the request body is never read. A stream that fails leaves no file behind.
      const written = await ingest.fileStore.writeNew(
        'upload',
        extension,
        withinLimit(part.file, limits.limitBytes),
      );
      stored = { ...written, name, mime: part.mimetype, format };
    }
    if (!stored) throw new ValidationError('the upload has no file (field "file")', { field: 'file' });
    return { fields, stored };
  } catch (error) {
    if (stored) await ingest.fileStore.remove(stored.storedPath);
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE' || code === 'FILE_TOO_LARGE') {
      // The rest of the body is not read: the connection closes after the answer.
      reply.header('connection', 'close');
      throw payloadTooLarge(limits.limitBytes);
    }
    if (code === 'PREVIEW_LINE_TOO_LONG') reply.header('connection', 'close');
    throw error;
  }
}

/**
 * The first `prefixBytes` of a CSV, cut back to its last whole line (at most prefixBytes in memory);
 * reading stops there (`cut`: the file went on, the rest was not read). A first line longer than
 * the prefix is a 400 PREVIEW_LINE_TOO_LONG.
 */
async function csvPrefix(
  file: AsyncIterable<Buffer>,
  prefixBytes: number,
): Promise<{ bytes: Buffer; cut: boolean }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let lastLineEnd = -1;
  for await (const chunk of file) {
    const room = prefixBytes - bytes;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    const newline = kept.lastIndexOf(10);
    if (newline >= 0) lastLineEnd = bytes + newline + 1;
    bytes += kept.length;
    chunks.push(kept);
    if (kept.length < chunk.length) {
      // Leaving the loop stops the part's stream: nothing past the prefix is read.
      if (lastLineEnd <= 0) {
        throw new DomainError(
          'validation',
          `the first line of the file is longer than the ${Math.round(prefixBytes / 1024)} KiB the preview reads`,
          { code: 'PREVIEW_LINE_TOO_LONG' },
        );
      }
      return { bytes: Buffer.concat(chunks).subarray(0, lastLineEnd), cut: true };
    }
  }
  return { bytes: Buffer.concat(chunks), cut: false };
}

/** One job per sheet: a workbook's sheet names are read (only its small workbook part) at upload. */
async function sheetsOf(ingest: IngestHttpDeps, stored: { storedPath: string; format: FileFormat }) {
  try {
    const sheets = await ingest.files.sheets({ storedPath: stored.storedPath, format: stored.format });
    if (sheets.length === 0) throw new ValidationError('the workbook has no sheets', { field: 'file' });
    return sheets;
  } catch (error) {
    if (error instanceof IngestFailure)
      throw new ValidationError(error.message, { field: 'file', code: error.code });
    throw error;
  }
}

/** A 413 in the spec's error body (the error handler maps a 4xx statusCode as it is). */
function payloadTooLarge(limit: number): Error {
  const message = `the file is larger than the upload limit of ${Math.round((limit / 1024 / 1024) * 100) / 100} MB`;
  return Object.assign(new Error(message), { statusCode: 413, code: 'FILE_TOO_LARGE' });
}
