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
import { draftMegabytes, type QuotaAmount } from '../../domain/accounts/quotas.ts';
import type { FileStore } from '../../ports/ingest/file-store.ts';
import type { SourceFiles } from '../../ports/ingest/source-files.ts';
import { authorizeImportTarget, type ImportAccessDeps } from './import-access.ts';
import { describeDrift, driftHasChanges, type SchemaDrift } from '../../domain/ingest/schema.ts';
import { type CallerAllowance, callerAllowance } from './import-allowance.ts';
import { driftAgainstDataset } from './job-schema-drift.ts';
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
  /** The service's ceiling on a file (INGEST_MAX_FILE_SIZE_MB), for the allowance. */
  maxFileSizeBytes: number;
};

export type Configuration = { settings?: unknown; dataset?: unknown };

const draftNotFound = (id: number) =>
  new NotFoundError(`upload ${id} does not exist (or is not yours)`, { code: 'UPLOAD_NOT_FOUND' });

/**
 * What a stored draft takes (issue 30 §1, every stored byte counts): the upload's fileUploadsPerDay
 * now (its start takes only importJobsPerDay), and its size of draftStorageMB until it starts or expires.
 */
function draftQuotaAmounts(sizeBytes: number, stored: boolean): QuotaAmount[] {
  const amounts: QuotaAmount[] = [{ quota: 'draftStorageMB', amount: draftMegabytes(sizeBytes) }];
  if (stored) amounts.push({ quota: 'fileUploadsPerDay', amount: 1 });
  return amounts;
}

export async function draftIngestFile(
  deps: Pick<WizardDeps, 'drafts' | 'hierarchy' | 'store' | 'clock' | 'quotas'>,
  viewer: Viewer,
  input: Pick<
    IngestDraft,
    'catalogId' | 'originalName' | 'storedPath' | 'sizeBytes' | 'sha256' | 'mimeType' | 'format' | 'sheets'
  > & {
    configuration: Configuration;
  },
): Promise<IngestDraft> {
  const { userId } = await authorizeImportTarget(deps, viewer, input.catalogId);
  // A configuration sent with the upload is checked now, so a bad one is refused before anything waits.
  await checkedSettings(deps, input, input.configuration);
  const expiresAt = new Date(deps.clock.now().getTime() + DRAFT_TTL_MS).toISOString();
  // All or nothing, atomically: concurrent drafts cannot pass the cap together.
  const taken = draftQuotaAmounts(input.sizeBytes, true);
  await deps.quotas.take(userId, taken);
  try {
    return await deps.drafts.create({ ...input, uploadedBy: userId, expiresAt });
  } catch (error) {
    await deps.quotas.give(userId, taken);
    throw error;
  }
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

/** A sheet's columns against the schema of the existing dataset it goes into. */
type SheetDrift = SchemaDrift & {
  sheetIndex: number;
  datasetId: number;
  /** The dataset's current schema version the file is compared with. */
  version: number;
  /** What the pipeline will do: `breaking` stops the import at validate-schema until approved. */
  description: string;
};

type DraftValidation = {
  valid: boolean;
  problems: ConfigurationProblem[];
  sheets: Awaited<ReturnType<typeof previewIngestSchema>>;
  /** Sheets into existing datasets whose columns differ from the dataset's current schema. */
  drift: SheetDrift[];
  /** The caller's quotas against this file, before the start; null while the settings do not parse. */
  allowance: CallerAllowance | null;
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
  return {
    draft,
    ...(await validateAgainstRows(deps, viewer, draft, configuration ?? draft.configuration, budget)),
  };
}

/**
 * The drift the pipeline's validate-schema will find, found now with the same rule
 * (driftAgainstDataset): each sheet going into an existing dataset, its detected columns against
 * the dataset's current schema under the chosen schema mode. Sheets that differ in nothing are left out.
 */
async function sheetDrifts(
  deps: Pick<WizardDeps, 'store'>,
  settings: IngestSettings,
  sheets: DraftValidation['sheets'],
): Promise<SheetDrift[]> {
  const drifts: SheetDrift[] = [];
  for (const sheet of sheets) {
    const target = settings.targets[sheet.index];
    if (sheet.problem || !target || !('datasetId' in target)) continue;
    const found = await driftAgainstDataset(deps.store, target.datasetId, sheet.fields, settings.schemaMode);
    if (!found || !driftHasChanges(found.drift)) continue;
    drifts.push({
      ...found.drift,
      sheetIndex: sheet.index,
      datasetId: target.datasetId,
      version: found.version,
      description: describeDrift(found.drift),
    });
  }
  return drifts;
}

async function validateAgainstRows(
  deps: WizardDeps,
  viewer: Viewer,
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
      drift: [],
      allowance: null,
    };
  }
  const sheets = await previewIngestSchema(deps, draft, draft.sheets, settings.fieldMapping, budget, true);
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
  // The start takes the caller's quotas (uploadIngestFile: the uploader is the caller). A refusal is
  // not a configuration problem: `allowance.allowed` says it, and the start is refused with the
  // quota's own 403 when the quotas are taken.
  const allowance = await callerAllowance(deps, requireViewer(viewer).id, {
    sheets: draft.sheets.length,
    // The draft took its fileUploadsPerDay when it was stored.
    upload: false,
    sizeBytes: draft.sizeBytes,
    rows: sheets.flatMap((sheet) => (sheet.rowCount ? [sheet.rowCount] : [])),
  });
  const drift = await sheetDrifts(deps, settings, sheets);
  return { valid: problems.length === 0, problems, sheets, drift, allowance };
}

/** Validates and starts the import: the draft becomes an ingest file with its jobs, queued. */
export async function startDraft(
  deps: WizardDeps,
  viewer: Viewer,
  id: number,
  budget?: AbortSignal,
): Promise<{ file: IngestFile; jobs: IngestJob[] }> {
  const draft = await openDraft(deps, viewer, id);
  const { problems } = await validateAgainstRows(deps, viewer, draft, draft.configuration, budget);
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
      uploadCounted: true,
      origin: draft.sha256 ? { sha256: draft.sha256 } : undefined,
    });
    await deps.drafts.recordStartedFile(id, created.file.id);
    // Now an import's file: its bytes leave the draft storage.
    await deps.quotas.give(draft.uploadedBy, draftQuotaAmounts(draft.sizeBytes, false));
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
  deps: Pick<WizardDeps, 'drafts' | 'fileStore' | 'clock'> & { quotas: Pick<Quotas, 'give'> },
): Promise<{ removed: number }> {
  const expired = await deps.drafts.expired(deps.clock.now(), 100);
  for (const draft of expired) {
    await deps.fileStore.remove(draft.storedPath);
    await deps.drafts.remove(draft.id);
    await deps.quotas.give(draft.uploadedBy, draftQuotaAmounts(draft.sizeBytes, false));
  }
  return { removed: expired.length };
}
