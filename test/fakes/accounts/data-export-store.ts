import type { DataExport, DataExportStore } from '../../../src/ports/accounts/data-export-store.ts';
import type { Clock } from '../../../src/ports/clock.ts';

const active = (record: DataExport) => record.status === 'queued' || record.status === 'running';

/**
 * The DataExportStore port in memory: records by id, one active (queued or running) export per
 * user as the Postgres unique index keeps it, times from `clock` (Postgres's now()). It passes the
 * behaviour suite postgresDataExportStore passes (test/contracts/accounts/data-export-store.ts).
 */
export function memoryDataExportStore(clock: Clock = { now: () => new Date() }): DataExportStore {
  const records = new Map<number, DataExport>();
  let lastId = 0;
  const ofUser = (userId: number) => [...records.values()].filter((r) => r.userId === userId);
  const change = (id: number, values: Partial<DataExport>, when: (r: DataExport) => boolean = () => true) => {
    const record = records.get(id);
    if (record && when(record)) Object.assign(record, values);
  };
  return {
    async create(userId) {
      if (ofUser(userId).some(active)) return null;
      const record: DataExport = {
        id: ++lastId,
        userId,
        status: 'queued',
        storedPath: null,
        sizeBytes: null,
        error: null,
        expiresAt: null,
        createdAt: clock.now().toISOString(),
        finishedAt: null,
      };
      records.set(record.id, record);
      return { ...record };
    },
    async get(id) {
      const record = records.get(id);
      return record ? { ...record } : null;
    },
    async hasActive(userId) {
      return ofUser(userId).some(active);
    },
    async latestFor(userId) {
      const latest = ofUser(userId).at(-1);
      return latest ? { ...latest } : null;
    },
    async requestsSince(userId, since) {
      const times = ofUser(userId)
        .map((r) => Date.parse(r.createdAt))
        .filter((at) => at > since.getTime());
      return { count: times.length, oldest: times.length ? new Date(Math.min(...times)) : null };
    },
    async markRunning(id) {
      change(id, { status: 'running' }, (r) => r.status === 'queued');
    },
    async markReady(id, file) {
      change(id, {
        status: 'ready',
        storedPath: file.storedPath,
        sizeBytes: file.sizeBytes,
        expiresAt: new Date(file.expiresAt).toISOString(),
        finishedAt: clock.now().toISOString(),
      });
    },
    async markFailed(id, error) {
      change(id, { status: 'failed', error: error.slice(0, 1000), finishedAt: clock.now().toISOString() });
    },
    async expired(now, limit) {
      return [...records.values()]
        .filter(
          (r) =>
            r.status === 'ready' && r.storedPath !== null && Date.parse(r.expiresAt ?? '') <= now.getTime(),
        )
        .sort((a, b) => Date.parse(a.expiresAt ?? '') - Date.parse(b.expiresAt ?? ''))
        .slice(0, limit)
        .map((r) => ({ ...r }));
    },
    async forgetFile(id) {
      change(id, { storedPath: null });
    },
  };
}
