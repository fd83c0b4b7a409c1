import { DomainError } from '../errors.ts';
import { invalid } from './read-query.ts';

// Positions in the change feed (GET /api/v1/changes): a change is stored by a transaction (its id,
// an xid8, which never wraps) as the seq-th change, and the feed is ordered by (transaction, seq).
// A reader only ever sees changes of transactions that have ended (the visibility fence of
// src/adapters/postgres/read/changes.ts), so "the changes after a position" is a set that only
// grows at its end: resuming from any cursor neither skips nor repeats a change.
//
// The cursor a client sees is opaque: base64url of `c1.<txid>.<seq>`, checked in full.

export type ChangePosition = { txid: bigint; seq: bigint };

/** How long the change feed keeps a change: 30 days (the schedule manager prunes older ones every minute). */
export const CHANGE_RETENTION_SECONDS = 30 * 24 * 3600;

const MAX_CURSOR_LENGTH = 64;
const UINT64_MAX = 2n ** 64n - 1n;
const INT64_MAX = 2n ** 63n - 1n;

export function encodeChangeCursor(position: ChangePosition): string {
  return Buffer.from(`c1.${position.txid}.${position.seq}`).toString('base64url');
}

/** The `cursor` parameter of /changes: null when absent; a 400 naming `cursor` when not one of ours. */
export function parseChangeCursor(raw: unknown): ChangePosition | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string') throw invalid('cursor', 'cursor must be given once');
  const refuse = (): never => {
    throw invalid('cursor', 'cursor is not a cursor this API gave (use nextCursor as it is)');
  };
  if (raw.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(raw)) refuse();
  const match = /^c1\.(0|[1-9]\d{0,19})\.(0|[1-9]\d{0,18})$/.exec(Buffer.from(raw, 'base64url').toString());
  if (!match) return refuse();
  const txid = BigInt(match[1] as string);
  const seq = BigInt(match[2] as string);
  if (txid > UINT64_MAX || seq > INT64_MAX) refuse();
  return { txid, seq };
}

/** Whether position a comes before b in the feed's order. */
export function isBefore(a: ChangePosition, b: ChangePosition): boolean {
  return a.txid < b.txid || (a.txid === b.txid && a.seq < b.seq);
}

/** A cursor before the oldest change still kept: the changes after it were pruned (410). */
export function prunedCursor(horizon: ChangePosition): DomainError {
  return new DomainError(
    'gone',
    'the changes after this cursor are no longer kept (see docs/api-v1.md, change feed retention): start again without a cursor',
    { code: 'CURSOR_EXPIRED', details: `oldest resumable cursor: ${encodeChangeCursor(horizon)}` },
  );
}
