import type { Viewer } from '../../domain/access.ts';
import type { ChangePosition } from '../../domain/read/change-cursor.ts';
import type { EventFilter } from '../../domain/read/read-query.ts';

// The change feed behind GET /api/v1/changes (issue 39 §1): the changes to events a viewer may
// read, in the order they were stored, after a position.

/** One change: an event created or updated (with the event as it is now), or deleted (its id only). */
export type Change = {
  position: ChangePosition;
  kind: 'created' | 'updated' | 'deleted';
  eventId: number;
  storedAt: string;
  /** The EventView as JSON text; null for a deletion, or for an event deleted since (its deletion follows). */
  eventJson: string | null;
};

type ChangesPage = {
  changes: Change[];
  /** Where the next read resumes: after the last change shown, or after every change read past. */
  next: ChangePosition;
  /** Whether more changes are already readable after `next` (the page was full). */
  hasMore: boolean;
};

export interface ChangeFeed {
  /**
   * Up to `limit` changes after `after` (null: from the oldest kept) that the viewer may read and
   * the filter matches. A 410 DomainError ('gone') when changes after `after` were pruned.
   */
  readChanges(
    viewer: Viewer,
    filter: EventFilter,
    after: ChangePosition | null,
    limit: number,
  ): Promise<ChangesPage>;
  /**
   * Of the changes at these positions, those readChanges would show this viewer with this filter
   * (the same access rule and location privacy), as they are now, in the feed's order. A
   * subscription's delivery reads its matched changes through this (issue 39 §2).
   */
  readChangesAt(viewer: Viewer, filter: EventFilter, positions: ChangePosition[]): Promise<Change[]>;
  /**
   * readChangesAt for several filters and positions of one viewer at once (all the due deliveries
   * of one owner, in one read): the answers in the requests' order.
   */
  readChangesAtEach(
    viewer: Viewer,
    requests: readonly { filter: EventFilter; positions: ChangePosition[] }[],
  ): Promise<Change[][]>;
}
