// When events were stored and last changed, for the feeds of saved views (issue 39 §2). The ids come
// from a page the read model answered under the viewer's access: this only adds two times to them.

type StoredTimes = { storedAt: string; updatedAt: string };

export interface EventTimes {
  /** ISO 8601 times per event id; an id without a row (deleted since) is left out. */
  of(ids: readonly number[]): Promise<Map<number, StoredTimes>>;
}
