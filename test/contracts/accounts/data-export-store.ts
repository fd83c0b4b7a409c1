import type { Test } from 'tap';
import type { DataExportStore } from '../../../src/ports/accounts/data-export-store.ts';

// What every DataExportStore does, as one suite: run against the in-memory fake
// (test/unit/fakes/accounts/data-export-store.test.ts) and against postgresDataExportStore
// (test/integration/accounts/data-export-store-contract.test.ts). Records are stamped by the
// store's own clock (the database's now()); the suite compares them with the time around the call.

export type MakeDataExportStore = () => Promise<{ exports: DataExportStore; addUser(): Promise<number> }>;

const HOUR_MS = 60 * 60 * 1000;
const FILE = { storedPath: 'exports/1.zip', sizeBytes: 2048 };
const inAnHour = () => new Date(Date.now() + HOUR_MS).toISOString();

export function dataExportStoreContract(t: Test, make: MakeDataExportStore): void {
  t.test('a request is queued, and it is the one active export of its user', async (t) => {
    const { exports, addUser } = await make();
    const [userId, other] = [await addUser(), await addUser()];
    const before = Date.now();
    const created = await exports.create(userId);
    t.match(created, { userId, status: 'queued' });
    if (!created) return;
    const unset = ['storedPath', 'sizeBytes', 'error', 'expiresAt', 'finishedAt'] as const;
    t.same(
      unset.filter((field) => created[field] !== null),
      [],
      'no file, size, error, expiry or end yet',
    );
    t.ok(
      Date.parse(created.createdAt) >= before - 1000 && Date.parse(created.createdAt) <= Date.now() + 1000,
      'stamped now',
    );
    t.same(await exports.get(created.id), created);
    t.equal(await exports.hasActive(userId), true);
    t.equal(await exports.create(userId), null, 'a second one while the first is queued');
    await exports.markRunning(created.id);
    t.equal(await exports.create(userId), null, 'or running');
    t.equal(await exports.hasActive(other), false);
    t.not(await exports.create(other), null, "another user's is theirs");
  });

  t.test('two requests at once: one is created', async (t) => {
    const { exports, addUser } = await make();
    const userId = await addUser();
    const both = await Promise.all([exports.create(userId), exports.create(userId)]);
    t.equal(both.filter((created) => created !== null).length, 1);
  });

  t.test('queued, running, then ready with its file; then another may be requested', async (t) => {
    const { exports, addUser } = await make();
    const userId = await addUser();
    const { id } = (await exports.create(userId)) ?? { id: 0 };
    await exports.markRunning(id);
    t.match(await exports.get(id), { status: 'running' });
    const expiresAt = inAnHour();
    await exports.markReady(id, { ...FILE, expiresAt });
    const ready = await exports.get(id);
    t.match(ready, { status: 'ready', ...FILE, expiresAt, error: null });
    t.ok(ready?.finishedAt, 'finished');
    t.equal(await exports.hasActive(userId), false);
    const next = await exports.create(userId);
    t.match(next, { status: 'queued' });
    t.same(await exports.latestFor(userId), next, 'the latest is the newest request');
  });

  t.test('a failure keeps its reason (the first 1000 characters) and is final', async (t) => {
    const { exports, addUser } = await make();
    const userId = await addUser();
    const { id } = (await exports.create(userId)) ?? { id: 0 };
    await exports.markFailed(id, `disk full ${'x'.repeat(2000)}`);
    await exports.markRunning(id);
    const failed = await exports.get(id);
    t.match(failed, { status: 'failed', storedPath: null });
    t.equal(failed?.error?.length, 1000);
    t.match(failed?.error, /^disk full x/);
    t.ok(failed?.finishedAt);
    t.equal(await exports.hasActive(userId), false);
  });

  t.test('requests since a time: how many, and when the oldest was', async (t) => {
    const { exports, addUser } = await make();
    const userId = await addUser();
    t.same(await exports.requestsSince(userId, new Date(Date.now() - HOUR_MS)), { count: 0, oldest: null });
    t.equal(await exports.latestFor(userId), null);
    const first = (await exports.create(userId)) ?? { id: 0, createdAt: '' };
    await exports.markFailed(first.id, 'no');
    await exports.create(userId);
    const recent = await exports.requestsSince(userId, new Date(Date.now() - HOUR_MS));
    t.same(recent, { count: 2, oldest: new Date(first.createdAt) });
    t.same(await exports.requestsSince(userId, new Date(Date.now() + HOUR_MS)), { count: 0, oldest: null });
    t.equal(await exports.get(2_000_000_000), null);
  });

  t.test('ready exports past their expiry, soonest first, until their file is forgotten', async (t) => {
    const { exports, addUser } = await make();
    const userId = await addUser();
    const ready = async (expiresAt: string) => {
      const { id } = (await exports.create(userId)) ?? { id: 0 };
      await exports.markReady(id, { storedPath: `exports/${id}.zip`, sizeBytes: 1, expiresAt });
      return id;
    };
    // Long past, so that no other case's export (expiring an hour from now) is among them.
    const late = await ready('2001-01-03T00:00:00.000Z');
    const early = await ready('2001-01-01T00:00:00.000Z');
    const middle = await ready('2001-01-02T00:00:00.000Z');
    await ready('2001-02-01T00:00:00.000Z');
    const failed = (await exports.create(userId)) ?? { id: 0 };
    await exports.markFailed(failed.id, 'no');
    const at = new Date('2001-01-03T00:00:00.000Z');
    t.same(
      (await exports.expired(at, 10)).map((e) => e.id),
      [early, middle, late],
      'at its expiry it is expired',
    );
    t.same(
      (await exports.expired(at, 2)).map((e) => e.id),
      [early, middle],
    );
    await exports.forgetFile(early);
    t.match(await exports.get(early), { status: 'ready', storedPath: null }, 'the record stays');
    t.same(
      (await exports.expired(at, 10)).map((e) => e.id),
      [middle, late],
    );
  });
}
