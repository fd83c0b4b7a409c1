import t from 'tap';
import { policyFile } from '../../helpers/accounts.ts';
import {
  authHeaders,
  ingestApp,
  multipart,
  signIn,
  upload,
  type UploadedDoc,
  waitForFile,
} from '../../fixtures/ingest/client.ts';

// What the import wizard's Validate says before the start: the drift of the file's columns from
// the target dataset's schema (the same finding the pipeline makes after the start), and the
// caller's quotas against the file's rows and size, with the numbers.

const FIRST = 'when,lat,lon,name\n2026-01-01T00:00:00Z,52.5,13.4,a\n2026-01-02T00:00:00Z,48.8,2.3,b\n';
const DRIFTED = 'when,lat,lon,depth\n2026-01-03T00:00:00Z,52.5,13.4,7\n2026-01-04T00:00:00Z,48.8,2.3,9\n';

t.test(
  'Validate shows the drift from the dataset before the start; the pipeline finds the same',
  async (t) => {
    const { app, catalogId } = await ingestApp(t);
    const first = await upload(app, catalogId, { name: 'first.csv', content: FIRST });
    t.equal(first.statusCode, 201, first.body);
    const doc = (first.json() as { doc: UploadedDoc }).doc;
    t.equal((await waitForFile(app, doc.id)).status, 'completed');
    const datasetId = doc.datasets[0] as number;

    const drafted = await upload(
      app,
      catalogId,
      { name: 'drifted.csv', content: DRIFTED },
      { start: 'false' },
    );
    t.equal(drafted.statusCode, 201, drafted.body);
    const draft = drafted.json().draft.id as number;
    const post = (url: string, payload: Record<string, unknown>) =>
      app.inject({ method: 'POST', url, payload, headers: authHeaders(app) });

    const intoNew = await post('/api/ingest/validate-preview', { draft, dataset: 'new' });
    t.same(intoNew.json().drift, [], 'a new dataset has no schema to drift from');

    const validated = await post('/api/ingest/validate-preview', { draft, dataset: datasetId });
    t.equal(validated.statusCode, 200, validated.body);
    t.same(validated.json().drift, [
      {
        sheetIndex: 0,
        datasetId,
        version: 1,
        added: ['depth'],
        removed: ['name'],
        changed: [],
        breaking: true,
        description: 'added depth; removed name',
      },
    ]);
    const flexible = await post('/api/ingest/validate-preview', {
      draft,
      dataset: datasetId,
      settings: { schemaMode: 'flexible' },
    });
    t.match(
      flexible.json().drift,
      [{ breaking: false }],
      'the schema mode decides what breaks, as in the pipeline',
    );

    const started = await post('/api/ingest/configure', { draft, dataset: datasetId, start: true });
    t.equal(started.statusCode, 201, started.body);
    const after = await waitForFile(app, started.json().doc.id as number);
    t.equal(after.jobs[0]?.currentStage, 'failed');
    t.match(
      after.errorLog,
      [/SCHEMA_DRIFT|added depth; removed name/],
      'after the start the pipeline stops at the drift the wizard showed',
    );
    t.match(after.errorLog?.[0], /added depth; removed name/);
  },
);

t.test(
  "Validate checks the file's rows and size against the caller's quotas, with the numbers",
  async (t) => {
    const quotasFile = policyFile(t, (p) => {
      p.quotas.eventsPerImport.levels[1] = 3;
      p.quotas.totalEvents.levels[1] = 5;
    });
    const { app, db, catalogId } = await ingestApp(t, {}, false, { quotasFile });
    const user = await signIn(app, db.pool, { trustLevel: 1, owns: catalogId });
    const rows = Array.from({ length: 4 }, (_, i) => `2026-01-0${i + 1}T00:00:00Z,52.5,13.4,r${i}`);
    const content = ['when,lat,lon,name', ...rows].join('\n') + '\n';
    const body = multipart({ catalog: String(catalogId), start: 'false' }, { name: 'four.csv', content });
    const headers = { authorization: `Bearer ${user.token}` };
    const drafted = await app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      payload: body.payload,
      headers: { ...body.headers, ...headers },
    });
    t.equal(drafted.statusCode, 201, drafted.body);
    const validated = await app.inject({
      method: 'POST',
      url: '/api/ingest/validate-preview',
      payload: { draft: drafted.json().draft.id },
      headers,
    });
    t.equal(validated.statusCode, 200, validated.body);
    const answer = validated.json();
    t.same(answer.sheets[0].rowCount, { total: 4, complete: true }, 'every data row counted');
    t.equal(answer.allowance.allowed, true, 'nothing refuses the start');
    t.equal(answer.allowance.maxFileBytes, 25 * 1024 * 1024, "level 1's 25 MB per file");
    const byQuota = Object.fromEntries(
      (answer.allowance.verdicts as { quota: string; consequence: string; message: string }[]).map((v) => [
        v.quota,
        v,
      ]),
    );
    t.equal(byQuota.fileUploadsPerDay, undefined, 'the draft took its upload when it was stored');
    t.match(byQuota.importJobsPerDay, {
      consequence: 'fits',
      message: 'Import jobs: this takes 1, 9 of 10 left today after it',
    });
    t.match(byQuota.maxFileSizeMB, { consequence: 'fits', message: '1 KB: within your 25 MB per file' });
    t.match(byQuota.eventsPerImport, {
      consequence: 'stops',
      message:
        'this file has 4 rows; your level allows 3 per import, so the import would stop after 3 events: ' +
        'split the file or ask an administrator to raise your trust level',
    });
    t.match(byQuota.totalEvents, { consequence: 'fits', message: '1 of 5 events left after it' });
  },
);

t.test(
  'a draft takes the upload quota when stored: a spent one refuses every upload, not its start',
  async (t) => {
    const quotasFile = policyFile(t, (p) => {
      p.quotas.fileUploadsPerDay.levels[1] = 1;
    });
    const { app, db, catalogId } = await ingestApp(t, {}, false, { quotasFile });
    const user = await signIn(app, db.pool, { trustLevel: 1, owns: catalogId });
    const headers = { authorization: `Bearer ${user.token}` };
    const send = (start: string) => {
      const body = multipart({ catalog: String(catalogId), start }, { name: 'a.csv', content: FIRST });
      return app.inject({
        method: 'POST',
        url: '/api/ingest-files',
        payload: body.payload,
        headers: { ...body.headers, ...headers },
      });
    };
    const drafted = await send('false');
    t.equal(drafted.statusCode, 201, drafted.body);
    // The draft took the day's one upload (issue 30 §1): another upload, draft or not, is refused.
    for (const start of ['true', 'false']) {
      const again = await send(start);
      t.equal(again.statusCode, 403, again.body);
      t.match(again.json(), { code: 'QUOTA_EXCEEDED', message: /fileUploadsPerDay/ });
    }
    const validated = await app.inject({
      method: 'POST',
      url: '/api/ingest/validate-preview',
      payload: { draft: drafted.json().draft.id },
      headers,
    });
    t.match(validated.json().allowance, { allowed: true }, 'its start is not counted as a second upload');
    t.notOk(
      (validated.json().allowance.verdicts as { quota: string }[]).some(
        (v) => v.quota === 'fileUploadsPerDay',
      ),
    );
  },
);
