import type { FileFormat } from '../../domain/ingest/imports.ts';

// Uploads waiting for the import wizard's configuration (domain/ingest/drafts.ts).

export type IngestDraft = {
  id: number;
  uploadedBy: number;
  catalogId: number;
  originalName: string;
  storedPath: string;
  sizeBytes: number;
  /** Hex SHA-256 of the upload, computed as it was written (null for a draft stored before 0890). */
  sha256?: string | null;
  mimeType: string | null;
  format: FileFormat;
  sheets: (string | null)[];
  /** The configuration as stored: the upload's `settings` and `dataset` fields. */
  configuration: { settings?: unknown; dataset?: unknown };
  configuredAt: string | null;
  startedFileId: number | null;
  startedAt: string | null;
  expiresAt: string;
  createdAt: string;
};

type NewIngestDraft = Omit<IngestDraft, 'id' | 'configuredAt' | 'startedFileId' | 'startedAt' | 'createdAt'>;

export interface IngestDrafts {
  create(draft: NewIngestDraft): Promise<IngestDraft>;
  get(id: number): Promise<IngestDraft | null>;
  configure(id: number, configuration: IngestDraft['configuration']): Promise<IngestDraft | null>;
  /** Marks the draft started unless it was (false then): the one place a draft starts once. */
  claimStart(id: number): Promise<boolean>;
  /** Undoes a claim whose import could not be recorded. */
  releaseStart(id: number): Promise<void>;
  recordStartedFile(id: number, fileId: number): Promise<void>;
  /** Drafts that expired without starting (at most `limit`), for their files to be removed. */
  expired(now: Date, limit: number): Promise<IngestDraft[]>;
  remove(id: number): Promise<void>;
}
