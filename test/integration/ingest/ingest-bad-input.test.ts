import { readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t from 'tap';
import {
  authHeaders,
  countEvents,
  ingestApp,
  jobRow,
  type UploadedDoc,
  upload,
  streamUpload,
  waitForFile,
} from '../../fixtures/ingest/client.ts';

// Bad files: each ends with a clear error in the job's errorLog and no events half-written.

t.test('bad files', async (t) => {
  const { app, db, catalogId } = await ingestApp(t);

  const ingestFile = async (name: string, content: Buffer | string, settings?: object) => {
    const response = await upload(
      app,
      catalogId,
      { name, content },
      settings ? { settings: JSON.stringify(settings) } : {},
    );
    t.equal(response.statusCode, 201, response.body);
    const doc = (response.json() as { doc: UploadedDoc }).doc;
    const progress = await waitForFile(app, doc.id);
    const job = await jobRow(app, doc.jobs[0]?.id as number);
    return { doc, progress, job, events: await countEvents(db.pool, doc.datasets[0] as number) };
  };

  const expectFailure = async (
    name: string,
    content: Buffer | string,
    pattern: RegExp,
    type: string,
    settings?: object,
  ) => {
    const { progress, job, events } = await ingestFile(name, content, settings);
    t.equal(progress.status, 'failed', `${name}: the file fails`);
    t.equal(job.stage, 'failed');
    t.match(job.errorLog?.lastError, pattern, `${name}: ${job.errorLog?.lastError}`);
    t.equal(job.errorLog?.classification.type, type, `${name} is ${type}`);
    t.match(progress.errorLog?.[0], pattern, 'the file shows the error too');
    t.equal(events, 0, `${name}: no events`);
  };

  await t.test('empty file', async () => expectFailure('empty.csv', '', /empty/, 'permanent'));
  await t.test('header only', async () =>
    expectFailure('header.csv', 'time,latitude,longitude\n', /no data rows/, 'permanent'),
  );
  await t.test('one column without a timestamp', async () =>
    expectFailure('one.csv', 'name\nAda\nGrace\n', /no timestamp column/, 'user_action_required'),
  );
  await t.test('binary', async () =>
    expectFailure(
      'image.csv',
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48]),
      /binary/,
      'permanent',
    ),
  );
  await t.test('wrong encoding (UTF-16)', async () =>
    expectFailure(
      'utf16.csv',
      Buffer.from('\ufefftime,place\n2026-01-01,Köln\n', 'utf16le'),
      /UTF-16/,
      'permanent',
    ),
  );
  await t.test('mixed encodings (Latin-1, then UTF-8 on data row 3)', async () =>
    expectFailure(
      'mixed.csv',
      Buffer.concat([
        Buffer.from(
          'time,place,latitude,longitude\n2026-01-01,Köln,50.9,6.9\n2026-01-02,Bern,46.9,7.4\n',
          'latin1',
        ),
        Buffer.from('2026-01-03,Zürich,47.4,8.5\n', 'utf8'),
      ]),
      /mixes text encodings: it is Latin-1 \(Windows-1252\) up to row 3, which holds "ü" written in UTF-8/,
      'permanent',
    ),
  );
  await t.test('100,000 columns', async () => {
    const header = Array.from({ length: 100_000 }, (_, i) => `c${i}`).join(',');
    await expectFailure('wide.csv', `${header}\n${header}\n`, /100000 columns/, 'permanent');
  });
  await t.test('every date invalid', async () =>
    expectFailure(
      'dates.csv',
      'time,title\nnot a date,a\n31.02.2026,b\n',
      /none of the 2 row/,
      'user_action_required',
      {
        fieldMapping: { timestamp: 'time' },
      },
    ),
  );

  await t.test(
    'ragged rows (too many values or too few), invalid dates and out-of-range coordinates are skipped and reported',
    async (t) => {
      const csv = [
        'time,latitude,longitude,title',
        '2026-01-01T00:00:00Z,52.5,13.4,fine',
        '2026-01-02T00:00:00Z,95,13.4,latitude out of range',
        '2026-01-03T00:00:00Z,52.5,200,longitude out of range',
        'yesterday,52.5,13.4,invalid date',
        '2026-01-05T00:00:00Z,52.5,13.4,too,many,values',
        '2026-01-06T00:00:00Z,52.5,13.4',
      ].join('\n');
      const { progress, job, events } = await ingestFile('ragged.csv', csv, {
        fieldMapping: { timestamp: 'time' },
      });
      t.equal(progress.status, 'completed');
      t.equal(events, 1, 'only the valid row: a short row may have lost a value anywhere');
      t.equal(progress.jobs[0]?.errors, 5);
      t.match(job.errorLog?.lastError, /5 of 6 rows were invalid/);
      const rowErrors = (job.errorLog as unknown as { rowErrors: { row: number; field: string }[] })
        .rowErrors;
      t.same(
        rowErrors.map((e) => [e.row, e.field]),
        [
          [2, 'latitude'],
          [3, 'longitude'],
          [4, 'timestamp'],
          [5, 'row'],
          [6, 'row'],
        ],
      );
    },
  );
});

t.test(
  'an upload larger than the limit is refused while it streams, and nothing stays on disk',
  async (t) => {
    const { app, catalogId, dataDir } = await ingestApp(t, { maxFileSizeBytes: 1024 * 1024 }, false);
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    t.ok(address);

    // Declared up front: refused before the body is read.
    const declared = await app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      headers: {
        'content-type': 'multipart/form-data; boundary=x',
        'content-length': String(2 * 1024 ** 3),
        ...authHeaders(app),
      },
      payload: '--x--\r\n',
    });
    t.equal(declared.statusCode, 413);

    // Chunked, no length: a "2 GB" stream that the server cuts off after the limit.
    const line = Buffer.from(`${'2026-01-01T00:00:00Z,'.padEnd(1023, 'x')}\n`);
    const result = await streamUpload(
      port,
      '/api/ingest-files',
      authHeaders(app),
      { catalog: String(catalogId) },
      line,
      2 * 1024 ** 3,
    );
    if (result.status !== -1) {
      t.equal(result.status, 413, result.body);
      t.match(JSON.parse(result.body), { error: 'Payload Too Large', code: 'FILE_TOO_LARGE' });
    } else t.match(result.body, /ECONNRESET|EPIPE|socket hang up/, 'the server cut the upload off');
    t.ok(result.sent < 2 * 1024 ** 3, 'the server stopped the upload long before 2 GB');
    const leftovers = readdirSync(path.join(dataDir), { recursive: true }).filter((f) =>
      String(f).endsWith('.csv'),
    );
    t.same(leftovers, [], 'the partial file was removed');
  },
);
