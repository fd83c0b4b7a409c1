import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import type { Caller, MatrixFixture } from './route-authorization-fixture.ts';

// The row type and the small builders of the route authorization matrix (route-authorization-table.ts).

export type MatrixRequest = {
  url: string;
  payload?: unknown;
  headers?: Record<string, string>;
  /** Send as this token instead of the caller's own (a fresh session, or the target user's own). */
  token?: string;
};

export type MatrixRow = {
  /** Statuses for anonymous, stranger, owner, admin. */
  expect: readonly [number, number, number, number];
  /** Who may, in words (the doc's last column). */
  rule: string;
  request: (fx: MatrixFixture, caller: Caller) => MatrixRequest | Promise<MatrixRequest>;
  /**
   * Statuses for the owner's API keys: read-only, write, and a write key limited to another catalog
   * of the owner's. Unset: keyExpectations (route-authorization-keys.ts) derives them from the rule.
   */
  keys?: readonly [number, number, number];
  /** Changes or ends what it touches: runs after the others, on fresh resources. */
  destructive?: boolean;
};

export const get = (url: string) => () => ({ url });
export const at = (build: (fx: MatrixFixture) => string) => (fx: MatrixFixture) => ({ url: build(fx) });
export const body =
  (url: (fx: MatrixFixture) => string, payload: (fx: MatrixFixture) => unknown) => (fx: MatrixFixture) => ({
    url: url(fx),
    payload: payload(fx),
  });
export const unique = () => randomUUID().slice(0, 8);

export const PUBLIC = 'public';
export const USER = 'any logged-in user';
export const OWNER = 'owner or admin; 404 for others';
export const IMPORT = 'uploader, catalog owner or admin; 404 for others';
export const SCHEDULE = 'creator, catalog owner or admin; 404 for others';
export const ADMIN = 'admins only';
export const CSRF =
  'HTML form: a session and a CSRF token (none sent here: 403; anonymous: to the login page)';

export const publicRead = (url: string): MatrixRow => ({
  expect: [200, 200, 200, 200],
  rule: PUBLIC,
  request: get(url),
});

/** The slug of the fixture's private dataset: OGC API – Features names collections by slug. */
export async function datasetSlug(fx: MatrixFixture): Promise<string> {
  return fx.db.pool.oneFirst(
    sql.type(row(Type.Object({ slug: Type.String() })))`select slug from datasets where id = ${fx.dataset}`,
  );
}
