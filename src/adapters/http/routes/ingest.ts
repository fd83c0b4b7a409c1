import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { getIngestProgress } from '../../../application/ingest/get-ingest-progress.ts';
import { accessibleFile, type ImportAccessDeps } from '../../../application/ingest/import-access.ts';
import { previewIngestSchema } from '../../../application/ingest/preview-ingest-schema.ts';
import type { IngestDeps } from '../../../application/ingest/run-ingest-job.ts';
import type { ScheduleDeps } from '../../../application/ingest/scheduled-ingests.ts';
import { uploadIngestFile } from '../../../application/ingest/upload-ingest-file.ts';
import type { Viewer } from '../../../domain/access.ts';
import { DomainError, ValidationError } from '../../../domain/errors.ts';
import { IngestFailure } from '../../../domain/ingest/failures.ts';
import { parseIngestSettings } from '../../../domain/ingest/settings.ts';
import type { QuotaGate } from '../../../ports/ingest-ports.ts';
import type { FileFormat } from '../../../ports/ingest-store.ts';
import { ingestProgressPage } from '../../admin/ingest-progress.ts';
import { requireUser } from '../authentication.ts';
import { errorResponses } from '../error-body.ts';
import { USER_ONLY } from '../require-user.ts';
import { fileDoc } from './ingest-docs.ts';
import { IdParams, RecordId, SchemaPreview } from './ingest-schemas.ts';

export type IngestHttpDeps = Pick<IngestDeps, 'store' | 'queue' | 'clock' | 'retry' | 'files'> & {
  quotas: QuotaGate;
  /** Where uploads are streamed to (the SourceFiles root). */
  uploadRoot: string;
  maxFileSizeBytes: number;
  /** The catalog > dataset facts the access rules ask about (the collections' repository). */
  hierarchy: ImportAccessDeps['hierarchy'];
  schedules: ScheduleDeps;
  /** Keys the dashboard's CSRF tokens (the admin progress page's logout form). */
  dashboardCsrfSecret: string;
};

const FORMATS: Record<string, FileFormat> = {
  '.csv': 'csv',
  '.tsv': 'csv',
  '.txt': 'csv',
  '.xlsx': 'xlsx',
  '.ods': 'ods',
};

/**
 * Counts bytes as they pass and fails the stream as soon as they exceed the limit: busboy's own
 * limit only drops the excess and waits for the part to end, which for a 2 GB upload is 2 GB later.
 */
function byteCounter(limit: number) {
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (bytes > limit) callback(payloadTooLarge(limit));
      else callback(null, chunk);
    },
  });
  return { stream, bytes: () => bytes };
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
  await app.register(ingestProgressPage, {
    store: ingest.store,
    clock: ingest.clock,
    csrfSecret: ingest.dashboardCsrfSecret,
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
          'importJobsPerDay (403 quota_exceeded).',
        consumes: ['multipart/form-data'],
        response: {
          201: Type.Object({ doc: Type.Ref('IngestFileDoc'), message: Type.String() }),
          ...errorResponses(400, 401, 403, 404, 413, 415),
        },
      },
    },
    async (request, reply) => {
      signedIn(request, reply);
      const { fields, stored } = await receiveUpload(request, reply, ingest);
      try {
        const catalogId = Number(fields.catalog ?? fields.catalogId);
        if (!Number.isSafeInteger(catalogId) || catalogId < 1) {
          throw new ValidationError('catalog must be a catalog id', { field: 'catalog' });
        }
        let settings: unknown;
        try {
          settings = fields.settings ? JSON.parse(fields.settings) : undefined;
        } catch {
          throw new ValidationError('settings must be JSON', { field: 'settings' });
        }
        const created = await uploadIngestFile(
          { store: ingest.store, queue: ingest.queue, quotas: ingest.quotas, hierarchy: ingest.hierarchy },
          viewerOf(request),
          {
            originalName: stored.name,
            storedPath: stored.relative,
            sizeBytes: stored.bytes,
            mimeType: stored.mime || null,
            format: stored.format,
            source: 'upload',
            catalogId,
            settings: parseIngestSettings(settings, fields.dataset),
            sheets: await sheetsOf(ingest, stored),
          },
        );
        return reply
          .status(201)
          .send({ doc: fileDoc(created.file, created.jobs), message: 'Ingest file created' });
      } catch (error) {
        await rm(stored.full, { force: true });
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
          'Needs a logged-in user (401 otherwise).',
        consumes: ['multipart/form-data'],
        response: { 200: SchemaPreview, ...errorResponses(400, 401, 413) },
      },
    },
    async (request, reply) => {
      signedIn(request, reply);
      const { fields, stored } = await receiveUpload(request, reply, ingest);
      try {
        let mapping: unknown;
        try {
          mapping = fields.settings
            ? (JSON.parse(fields.settings) as { fieldMapping?: unknown }).fieldMapping
            : undefined;
        } catch {
          throw new ValidationError('settings must be JSON', { field: 'settings' });
        }
        const settings = parseIngestSettings(mapping ? { fieldMapping: mapping } : undefined, undefined);
        const sheets = await previewIngestSchema(
          { files: ingest.files },
          { storedPath: stored.relative, format: stored.format },
          await sheetsOf(ingest, stored),
          settings.fieldMapping,
        );
        return { fileName: stored.name, format: stored.format, sheets };
      } finally {
        await rm(stored.full, { force: true });
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

/** Who is calling: the accounts hooks' request.viewer (absent, so anonymous, without those hooks). */
export function viewerOf(request: FastifyRequest): Viewer {
  return (request as Partial<Pick<FastifyRequest, 'viewer'>>).viewer ?? null;
}

/**
 * Uploads need a logged-in user (the spec: protected API access needs an authenticated session, and
 * fileUploadsPerDay is a per-user quota). Refused before a byte of the body is read or stored.
 */
function signedIn(request: FastifyRequest, reply: FastifyReply): void {
  if (viewerOf(request)) return;
  reply.header('connection', 'close');
  requireUser(request);
}

type StoredUpload = {
  relative: string;
  full: string;
  name: string;
  mime: string;
  format: FileFormat;
  bytes: number;
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
): Promise<{ fields: Record<string, string>; stored: StoredUpload }> {
  if (!request.isMultipart()) {
    throw new DomainError('validation', 'send the file as multipart/form-data', {
      code: 'NOT_MULTIPART',
    });
  }
  const declared = Number(request.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > ingest.maxFileSizeBytes + 2 * 1024 * 1024) {
    // Refused before a byte of the body is read.
    reply.header('connection', 'close');
    throw payloadTooLarge(ingest.maxFileSizeBytes);
  }
  const fields: Record<string, string> = {};
  let stored: StoredUpload | null = null;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
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
      const month = new Date().toISOString().slice(0, 7);
      const relative = path.join(month, `${randomUUID()}${path.extname(name).toLowerCase()}`);
      const full = path.join(ingest.uploadRoot, relative);
      stored = { relative, full, name, mime: part.mimetype, format, bytes: 0 };
      await mkdir(path.dirname(full), { recursive: true });
      const counter = byteCounter(ingest.maxFileSizeBytes);
      // The size limit applies while streaming: the upload stops (413) before it can fill the disk,
      // and the rest of the request body is never read.
      await pipeline(part.file, counter.stream, createWriteStream(full, { flags: 'wx' }));
      stored.bytes = counter.bytes();
    }
    if (!stored) throw new ValidationError('the upload has no file (field "file")', { field: 'file' });
    return { fields, stored };
  } catch (error) {
    if (stored) await rm(stored.full, { force: true });
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE' || code === 'FILE_TOO_LARGE') {
      // The rest of the body is not read: the connection closes after the answer.
      reply.header('connection', 'close');
      throw payloadTooLarge(ingest.maxFileSizeBytes);
    }
    throw error;
  }
}

/** One job per sheet: a workbook's sheet names are read (only its small workbook part) at upload. */
async function sheetsOf(ingest: IngestHttpDeps, stored: { relative: string; format: FileFormat }) {
  try {
    const sheets = await ingest.files.sheets({ storedPath: stored.relative, format: stored.format });
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
