import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { MAX_CELL_CHARS } from '../../../src/domain/ingest/limits.ts';
import {
  authHeaders,
  countEvents,
  ingestApp,
  jobRow,
  multipart,
  preview,
  upload,
  type UploadedDoc,
  waitForFile,
} from '../../fixtures/ingest/client.ts';
import { ods, xlsx } from '../../fixtures/ingest/workbooks.ts';

// No silent loss in parsing: a row the parser cannot read, a ragged row or an oversized cell is a
// row error counted in the job's results; a column name that would reach an object's prototype is
// refused with a clear error instead of being dropped; a failed import leaves no empty dataset.

type RowErrors = { rowErrors: { row: number; field: string; message: string }[] };

t.test('row errors and refused headers', async (t) => {
  const { app, db, catalogId } = await ingestApp(t, { maxFileSizeBytes: 64 * 1024 * 1024 });

  const ingest = async (name: string, content: Buffer | string) => {
    const response = await upload(app, catalogId, { name, content });
    t.equal(response.statusCode, 201, response.body);
    const doc = (response.json() as { doc: UploadedDoc }).doc;
    const progress = await waitForFile(app, doc.id);
    const job = await jobRow(app, doc.jobs[0]?.id as number);
    return { doc, progress, job, datasetId: doc.datasets[0] as number };
  };

  const datasetExists = (id: number) =>
    db.pool.oneFirst(
      sql.type(row(Type.Object({ exists: Type.Boolean() })))`
        select exists (select 1 from datasets where id = ${id}) as exists`,
    );

  await t.test(
    'an unterminated quote costs one row, counted and shown, not the rest of the file',
    async (t) => {
      const csv = [
        'time,latitude,longitude,title',
        '2026-01-01T00:00:00Z,52.5,13.4,"first, never closed',
        '2026-01-02T00:00:00Z,48.8,2.3,second',
        '2026-01-03T00:00:00Z,40.4,-3.7,third',
        '',
      ].join('\n');
      const { progress, job, datasetId } = await ingest('quote.csv', csv);
      t.equal(progress.status, 'completed');
      t.equal(await countEvents(db.pool, datasetId), 2, 'the two rows after the broken one are imported');
      t.equal(progress.jobs[0]?.errors, 1, 'the broken row is counted');
      t.equal(job.errorLog?.code, 'INVALID_ROWS');
      t.match(job.errorLog?.lastError, /1 of 3 rows were invalid/);
      t.match((job.errorLog as unknown as RowErrors).rowErrors, [
        { row: 1, field: 'row', message: /unterminated quote/ },
      ]);
    },
  );

  for (const name of ['__proto__', 'constructor', 'prototype']) {
    await t.test(`a CSV column named ${name} is refused with a clear error, not dropped`, async (t) => {
      const csv = `time,${name},title\n2026-01-01T00:00:00Z,{"polluted":true},a\n`;
      const { progress, job } = await ingest(`${name}.csv`, csv);
      t.equal(progress.status, 'failed');
      t.equal(job.errorLog?.code, 'RESERVED_COLUMN_NAME');
      t.match(job.errorLog?.lastError, new RegExp(`"${name}".*rename the column`));
      t.equal(job.errorLog?.classification.type, 'permanent');
    });
  }

  await t.test('the preview names the refused column too, and leaves unreadable rows out', async (t) => {
    const csv = 'time,__proto__\n2026-01-01T00:00:00Z,x\n';
    const response = await preview(app, { name: 'proto.csv', content: csv });
    t.equal(response.statusCode, 200, response.body);
    t.match(response.json().sheets[0], { rowsSampled: 0, problem: /"__proto__".*rename the column/ });

    const previewed = await preview(app, {
      name: 'quote.csv',
      content: 'time,title\n2026-01-01,"open\n2026-01-02,b\n',
    });
    t.equal(previewed.statusCode, 200, previewed.body);
    t.match(previewed.json().sheets[0], {
      rowsSampled: 1,
      sample: [
        ['time', 'title'],
        ['2026-01-02', 'b'],
      ],
    });
  });

  for (const [format, build] of [
    ['xlsx', xlsx],
    ['ods', ods],
  ] as const) {
    await t.test(`a ${format} column named __proto__ is refused the same way`, async (t) => {
      const content = build([
        {
          name: 'Sheet1',
          rows: [
            ['time', '__proto__', 'title'],
            [{ dateIso: '2026-06-01T18:00:00Z' }, 'x', 'a'],
          ],
        },
      ]);
      const { progress, job } = await ingest(`proto.${format}`, content);
      t.equal(progress.status, 'failed');
      t.equal(job.errorLog?.code, 'RESERVED_COLUMN_NAME');
      t.match(job.errorLog?.lastError, /"__proto__"/);
    });
  }

  await t.test('a CSV row with fewer values than columns is a row error', async (t) => {
    const csv = 'time,title,place\n2026-01-01T00:00:00Z,a,Berlin\n2026-01-02T00:00:00Z,Paris\n';
    const { job, datasetId } = await ingest('short.csv', csv);
    t.equal(await countEvents(db.pool, datasetId), 1);
    t.match((job.errorLog as unknown as RowErrors).rowErrors, [
      { row: 2, field: 'row', message: 'has 2 values for 3 columns' },
    ]);
  });

  await t.test('a cell over the bound is a row error naming its column', async (t) => {
    const csv = `time,title,notes\n2026-01-01T00:00:00Z,a,${'n'.repeat(MAX_CELL_CHARS + 1)}\n2026-01-02T00:00:00Z,b,fine\n`;
    const { job, datasetId } = await ingest('wide-cell.csv', csv);
    t.equal(await countEvents(db.pool, datasetId), 1);
    t.match((job.errorLog as unknown as RowErrors).rowErrors, [
      { row: 1, field: 'notes', message: `is ${MAX_CELL_CHARS + 1} characters long` },
    ]);
  });

  await t.test('an unreadable file fails and leaves no empty dataset behind', async (t) => {
    const { progress, job, datasetId } = await ingest(
      'image.csv',
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48]),
    );
    t.equal(progress.status, 'failed');
    t.equal(job.errorLog?.classification.type, 'permanent');
    t.equal(await datasetExists(datasetId), false, 'the dataset the upload created is gone');
  });

  await t.test('a failure the user can fix keeps its dataset (the job can be revised)', async (t) => {
    const { progress, job, datasetId } = await ingest('names.csv', 'name\nAda\n');
    t.equal(progress.status, 'failed');
    t.equal(job.errorLog?.classification.type, 'user_action_required');
    t.equal(await datasetExists(datasetId), true);
  });

  await t.test('a 50 MB cell is a row error; no 50 MB event is stored', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-big-cell-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'big.csv');
    const out = createWriteStream(file);
    out.write('time,title,notes\n2026-01-01T00:00:00Z,big,');
    const chunk = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 50; i++) if (!out.write(chunk)) await once(out, 'drain');
    out.end('\n2026-01-02T00:00:00Z,small,fine\n');
    await once(out, 'finish');

    const { payload, headers } = multipart(
      { catalog: String(catalogId) },
      { name: 'big.csv', content: '\u0000' },
    );
    // The multipart body around the file, streamed from disk rather than held in memory.
    const marker = payload.indexOf(0);
    const body = Readable.from(
      (async function* () {
        yield payload.subarray(0, marker);
        for await (const part of createReadStream(file)) yield part as Buffer;
        yield payload.subarray(marker + 1);
      })(),
    );
    const response = await app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      payload: body,
      headers: { ...headers, ...authHeaders(app) },
    });
    t.equal(response.statusCode, 201, response.body);
    const doc = (response.json() as { doc: UploadedDoc }).doc;
    const progress = await waitForFile(app, doc.id);
    const job = await jobRow(app, doc.jobs[0]?.id as number);
    t.equal(progress.status, 'completed');
    t.equal(await countEvents(db.pool, doc.datasets[0] as number), 1, 'the small row is imported');
    t.match((job.errorLog as unknown as RowErrors).rowErrors, [
      { row: 1, field: 'row', message: /longer than 1048576 characters/ },
    ]);
    const largest = await db.pool.oneFirst(
      sql.type(row(Type.Object({ bytes: Type.Number() })))`
        select coalesce(max(octet_length(data::text)), 0)::int as bytes from events
        where dataset_id = ${doc.datasets[0] as number}`,
    );
    t.ok(largest < 1024, `the largest stored event's data is ${largest} bytes`);
  });
});
