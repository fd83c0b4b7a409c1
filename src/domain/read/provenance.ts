// Where an event came from, as the read API, the Explore page, the exports and the provenance page
// show it (issue 38 §5). The dataset's owner may hide it: then every surface says nothing beyond
// the dataset (`{"shown": false}`, and 404 for the page).

/** What made the ingest file the event was imported from. */
export type ProvenanceSource =
  | { kind: 'upload'; fileName: string; sha256: string | null }
  | {
      kind: 'url';
      /** The URL with its credentials and secret-looking parameters REDACTED (redactSourceUrl). */
      url: string | null;
      trigger: 'scheduled' | 'webhook';
      fetchedAt: string | null;
      etag: string | null;
      lastModified: string | null;
      fileName: string;
      sha256: string | null;
    }
  | {
      kind: 'scraper';
      /** The runner's run id. */
      runId: string | null;
      /** The commit a git scraper ran (null for uploaded code, or a runner that did not say). */
      commit: string | null;
      fileName: string;
      sha256: string | null;
    };

/** The provenance of an event that shows it. `sheet` and `source` come with one event, not in lists. */
export type ShownProvenance = {
  shown: true;
  /** The import job that stored the event's content (null: not stored by an import). */
  importJob: number | null;
  /** Its data row in the file (1-based, after the header), in the job's sheet. */
  row: number | null;
  sheet?: { index: number; name: string | null } | null;
  source?: ProvenanceSource | null;
  storedAt: string;
  changedAt: string;
  /** The public provenance page. */
  page: string;
};

export type EventProvenance = ShownProvenance | { shown: false };

/** The address of an event's provenance page. */
export function provenancePagePath(eventId: number): string {
  return `/events/${eventId}/provenance`;
}

/** What an ingest file's record says about its making, as the database keeps it (migration 0890). */
export type StoredFileSource = {
  source: 'upload' | 'scheduled' | 'webhook' | 'scraper';
  fileName: string;
  sha256: string | null;
  url: string | null;
  fetchedAt: string | null;
  etag: string | null;
  lastModified: string | null;
  runId: string | null;
  commit: string | null;
};

/** The source of an event as provenance shows it, from its file's record. */
export function provenanceSource(file: StoredFileSource): ProvenanceSource {
  const { fileName, sha256 } = file;
  if (file.source === 'scheduled' || file.source === 'webhook') {
    return {
      kind: 'url',
      url: file.url,
      trigger: file.source,
      fetchedAt: file.fetchedAt,
      etag: file.etag,
      lastModified: file.lastModified,
      fileName,
      sha256,
    };
  }
  if (file.source === 'scraper')
    return { kind: 'scraper', runId: file.runId, commit: file.commit, fileName, sha256 };
  return { kind: 'upload', fileName, sha256 };
}
