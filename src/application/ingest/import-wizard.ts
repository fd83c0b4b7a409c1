import { canAccessImport, requireViewer, type Viewer } from '../../domain/access.ts';
import { NotFoundError, ValidationError } from '../../domain/errors.ts';
import {
  assertDraftOpen,
  type ConfigurationProblem,
  DRAFT_TTL_MS,
  mappingProblems,
  sheetProblems,
} from '../../domain/ingest/drafts.ts';
import { type IngestSettings, parseIngestSettings } from '../../domain/ingest/settings.ts';
import type { Clock } from '../../ports/clock.ts';
import type { IngestDraft, IngestDrafts } from '../../ports/ingest/ingest-drafts.ts';
import type { IngestFile, IngestJob } from '../../domain/ingest/imports.ts';
import type { IngestQueue } from '../../ports/ingest/ingest-queue.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import type { Quotas } from '../../ports/accounts/quotas.ts';
import type { FileStore } from '../../ports/ingest/file-store.ts';
import type { SourceFiles } from '../../ports/ingest/source-files.ts';
import { authorizeImportTarget, type ImportAccessDeps } from './import-access.ts';
import { previewIngestSchema } from './preview-ingest-schema.ts';
import { uploadIngestFile } from './upload-ingest-file.ts';

// The import wizard's steps, each an API call an API client can make the same way: upload with
// `start=false` (a draft that waits DRAFT_TTL_MS), configure (settings stored, checked against the
// file's sheets), validate-preview (the settings checked against the file's first rows, nothing
// stored), start (validated again, then recorded and queued like any upload). A draft is its
// uploader's (and admins'); anyone else is told it does not exist.

export type WizardDeps = {
  drafts: IngestDrafts;
  store: IngestStore;
  queue: IngestQueue;
  quotas: Quotas;
  hierarchy: ImportAccessDeps['hierarchy'];
  files: SourceFiles;
  /** Where the uploads live: an expired draft's file is removed through it. */
  fileStore: FileStore;
  clock: Clock;
};

export type Configuration = { settings?: unknown; dataset?: unknown };

const draftNotFound = (id: number) =>
  new NotFoundError(`upload ${id} does not exist (or is not yours)`, { code: 'UPLOAD_NOT_FOUND' });

export async function draftIngestFile(
  deps: Pick<WizardDeps, 'drafts' | 'hierarchy' | 'store' | 'clock'>,
  viewer: Viewer,
  input: Pick<
    IngestDraft,
    'catalogId' | 'originalName' | 'storedPath' | 'sizeBytes' | 'mimeType' | 'format' | 'sheets'
  > & {
    configuration: Configuration;
  },
): Promise<IngestDraft> {
  const { userId } = await authorizeImportTarget(deps, viewer, input.catalogId);
  // A configuration sent with the upload is checked now, so a bad one is refused before anything waits.
  await checkedSettings(deps, input, input.configuration);
  const expiresAt = new Date(deps.clock.now().getTime() + DRAFT_TTL_MS).toISOString();
  return deps.drafts.create({ ...input, uploadedBy: userId, expiresAt });
}

/** The draft, when the caller may touch it and it is still open: 401, 404, 409 otherwise. */
export async function openDraft(
  deps: Pick<WizardDeps, 'drafts' | 'hierarchy' | 'clock'>,
  viewer: Viewer,
  id: number,
): Promise<IngestDraft> {
  requireViewer(viewer);
  const draft = await deps.drafts.get(id);
  if (!draft) throw draftNotFound(id);
  const catalog = (await deps.hierarchy.hierarchy('catalogs', draft.catalogId))?.catalog ?? null;
  if (!canAccessImport(viewer, { uploadedBy: draft.uploadedBy, catalog })) throw draftNotFound(id);
  assertDraftOpen(id, draft, deps.clock.now());
  return draft;
}

/** The settings a configuration means for this file: 400 with every problem the file's sheets show. */
async function checkedSettings(
  deps: Pick<WizardDeps, 'store'>,
  draft: Pick<IngestDraft, 'catalogId' | 'sheets'>,
  configuration: Configuration,
): Promise<IngestSettings> {
  const settings = parseIngestSettings(configuration.settings, configuration.dataset);
  const problems = [
    ...sheetProblems(settings, draft.sheets.length),
    ...(await datasetProblems(deps, draft, settings)),
  ];
  if (problems.length) throw invalidConfiguration(problems);
  return settings;
}

async function datasetProblems(
  deps: Pick<WizardDeps, 'store'>,
  draft: Pick<IngestDraft, 'catalogId'>,
  settings: IngestSettings,
): Promise<ConfigurationProblem[]> {
  const problems: ConfigurationProblem[] = [];
  for (const [index, target] of Object.entries(settings.targets)) {
    if (!('datasetId' in target)) continue;
    if (await deps.store.datasetInCatalog(target.datasetId, draft.catalogId)) continue;
    problems.push({
      field: Number(index) === 0 ? 'dataset' : 'settings.sheets',
      code: 'DATASET_NOT_IN_CATALOG',
      sheetIndex: Number(index),
      message: `dataset ${target.datasetId} is not in catalog ${draft.catalogId}`,
    });
  }
  return problems;
}

function invalidConfiguration(problems: ConfigurationProblem[]): ValidationError {
  const [first] = problems;
  return new ValidationError(problems.map((p) => p.message).join('; '), {
    code: first?.code ?? 'INVALID_CONFIGURATION',
    ...(first ? { field: first.field } : {}),
    details: JSON.stringify(problems),
  });
}

export async function configureDraft(
  deps: WizardDeps,
  viewer: Viewer,
  id: number,
  configuration: Configuration,
): Promise<IngestDraft> {
  const draft = await openDraft(deps, viewer, id);
  await checkedSettings(deps, draft, configuration);
  const stored = await deps.drafts.configure(id, configuration);
  if (!stored) return openDraft(deps, viewer, id).then(() => draft);
  return stored;
}

type DraftValidation = {
  valid: boolean;
  problems: ConfigurationProblem[];
  sheets: Awaited<ReturnType<typeof previewIngestSchema>>;
};

/** The configuration (the one given, else the stored one) against the file's first rows; changes nothing. */
export async function validateDraft(
  deps: WizardDeps,
  viewer: Viewer,
  id: number,
  configuration: Configuration | undefined,
  budget?: AbortSignal,
): Promise<DraftValidation & { draft: IngestDraft }> {
  const draft = await openDraft(deps, viewer, id);
  return { draft, ...(await validateAgainstRows(deps, draft, configuration ?? draft.configuration, budget)) };
}

async function validateAgainstRows(
  deps: WizardDeps,
  draft: IngestDraft,
  configuration: Configuration,
  budget?: AbortSignal,
): Promise<DraftValidation> {
  let settings: IngestSettings;
  try {
    settings = parseIngestSettings(configuration.settings, configuration.dataset);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return {
      valid: false,
      problems: [
        { field: error.field ?? 'settings', code: error.code ?? 'INVALID_SETTINGS', message: error.message },
      ],
      sheets: [],
    };
  }
  const sheets = await previewIngestSchema(deps, draft, draft.sheets, settings.fieldMapping, budget);
  const problems = [
    ...sheetProblems(settings, draft.sheets.length),
    ...(await datasetProblems(deps, draft, settings)),
  ];
  for (const sheet of sheets) {
    if (sheet.problem) {
      problems.push({
        field: 'file',
        code: 'SHEET_UNREADABLE',
        sheetIndex: sheet.index,
        message: sheet.problem,
      });
      continue;
    }
    problems.push(...mappingProblems(settings.fieldMapping, sheet.sample[0] ?? [], sheet.index));
  }
  return { valid: problems.length === 0, problems, sheets };
}

/** Validates and starts the import: the draft becomes an ingest file with its jobs, queued. */
export async function startDraft(
  deps: WizardDeps,
  viewer: Viewer,
  id: number,
  budget?: AbortSignal,
): Promise<{ file: IngestFile; jobs: IngestJob[] }> {
  const draft = await openDraft(deps, viewer, id);
  const { problems } = await validateAgainstRows(deps, draft, draft.configuration, budget);
  if (problems.length) throw invalidConfiguration(problems);
  if (!(await deps.drafts.claimStart(id))) return openDraft(deps, viewer, id).then(() => never());
  try {
    const created = await uploadIngestFile(deps, viewer, {
      originalName: draft.originalName,
      storedPath: draft.storedPath,
      sizeBytes: draft.sizeBytes,
      mimeType: draft.mimeType,
      format: draft.format,
      source: 'upload',
      catalogId: draft.catalogId,
      settings: parseIngestSettings(draft.configuration.settings, draft.configuration.dataset),
      sheets: draft.sheets,
    });
    await deps.drafts.recordStartedFile(id, created.file.id);
    return created;
  } catch (error) {
    await deps.drafts.releaseStart(id);
    throw error;
  }
}

function never(): never {
  throw new Error('unreachable: a draft claimed by another start is not open');
}

/** The schedule manager's clean-up: expired drafts go, with their files. */
export async function removeExpiredDrafts(
  deps: Pick<WizardDeps, 'drafts' | 'fileStore' | 'clock'>,
): Promise<{ removed: number }> {
  const expired = await deps.drafts.expired(deps.clock.now(), 100);
  for (const draft of expired) {
    await deps.fileStore.remove(draft.storedPath);
    await deps.drafts.remove(draft.id);
  }
  return { removed: expired.length };
}
