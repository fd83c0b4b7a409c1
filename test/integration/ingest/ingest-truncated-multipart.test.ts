import t from 'tap';
import { authHeaders, ingestApp, multipart, storedFiles } from '../../fixtures/ingest/client.ts';

// Issue 30 §7: a multipart body cut short is the client's fault: 400 TRUNCATED_MULTIPART on the
// upload and the preview, whatever the size of the file part when the body ends (a part over about
// 64 KiB answered 500), and nothing is left on disk.

t.test('a truncated multipart body is a 400 on the upload and the preview', async (t) => {
  const { app, catalogId, dataDir } = await ingestApp(t, {}, false);
  for (const size of [100, 100 * 1024, 1024 * 1024]) {
    const rows =
      'time,title,latitude,longitude\n' + '2024-01-01T00:00:00Z,a,1,2\n'.repeat(Math.ceil(size / 27));
    const { payload, headers } = multipart({ catalog: String(catalogId) }, { name: 'a.csv', content: rows });
    // The body ends inside the file part: no closing boundary.
    const cut = payload.subarray(0, payload.length - 200);
    for (const url of ['/api/ingest-files', '/api/ingest/preview']) {
      const response = await app.inject({
        method: 'POST',
        url,
        payload: cut,
        headers: { ...headers, ...authHeaders(app) },
      });
      t.equal(response.statusCode, 400, `${url}, ${size} bytes: ${response.body.slice(0, 200)}`);
      t.equal(response.json().code, 'TRUNCATED_MULTIPART', `${url}, ${size} bytes`);
    }
  }
  t.same(storedFiles(dataDir), [], 'no partial file left behind');
});
