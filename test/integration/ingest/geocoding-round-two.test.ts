import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import {
  authHeaders,
  ingestApp,
  signIn,
  upload,
  type UploadedDoc,
  waitForFile,
} from '../../fixtures/ingest/client.ts';

// Issue 33 through the HTTP API and an import, on the offline gazetteer: POST /api/geocoding/test
// lists the candidates of an ambiguous address with the precision and candidate count, and an
// import records them on the event (`locatedBy`) and in its geocoding report.

const LocatedBy = row(Type.Object({ title: Type.String(), locatedBy: Type.Unknown() }));

type Explained = {
  providers: {
    provider: string;
    outcome: { failure?: string; lowConfidence?: boolean; match?: Record<string, unknown> };
    candidates: { name: string; country: string; region: string | null; rejected: string | null }[];
  }[];
};

t.test('ambiguity, codes, long names and streets, as the API and an import say them', async (t) => {
  const { app, db, catalogId } = await ingestApp(t);
  const owner = authHeaders(app);
  const admin = { authorization: `Bearer ${(await signIn(app, db.pool, { role: 'admin' })).token}` };
  const explain = async (address: string) => {
    const reply = await app.inject({
      method: 'POST',
      url: '/api/geocoding/test',
      headers: admin,
      payload: { address },
    });
    t.equal(reply.statusCode, 200, address);
    return (reply.json() as Explained).providers[0];
  };

  const portsmouth = await explain('Portsmouth, US');
  t.match(portsmouth?.outcome, {
    lowConfidence: true,
    match: { matchedCountry: 'US', precision: 'city', candidateCount: 4 },
  });
  const inside = portsmouth?.candidates.filter((c) => c.rejected === null) ?? [];
  t.same(
    inside.map((c) => c.region).sort(),
    ['New Hampshire', 'Ohio', 'Rhode Island', 'Virginia'],
    'every Portsmouth of the US is listed',
  );
  t.match(await explain('La Gomera, ES'), {
    outcome: { failure: 'no matching place inside the given country or region' },
  });
  t.match(await explain('San Antonio, Venezuela (Bolivarian Republic of)'), {
    outcome: { match: { matchedCountry: 'VE' } },
  });
  t.match(await explain('Xyzzyville, Atlantis'), {
    outcome: { failure: /"Xyzzyville" is not a known place/ },
  });
  t.match(await explain('Alexanderplatz, Berlin, Germany'), {
    outcome: { location: { latitude: Number }, match: { matchedName: 'Berlin', precision: 'locality' } },
  });

  const csv = [
    'time,title,place',
    '2026-01-01T00:00:00Z,square,"Alexanderplatz, Berlin, Germany"',
    '2026-01-02T00:00:00Z,ambiguous,"Portsmouth, US"',
    '2026-01-03T00:00:00Z,code,"Helena, MT"',
  ].join('\n');
  const doc = (
    (await upload(app, catalogId, { name: 'round-two.csv', content: csv })).json() as { doc: UploadedDoc }
  ).doc;
  t.equal((await waitForFile(app, doc.id)).status, 'completed');
  const located = await db.pool.any(
    sql.type(LocatedBy)`select title, located_by as "locatedBy" from events order by title`,
  );
  t.match(located, [
    { title: 'ambiguous', locatedBy: null },
    { title: 'code', locatedBy: { matchedRegion: 'Montana', precision: 'city', candidateCount: 1 } },
    { title: 'square', locatedBy: { matchedName: 'Berlin', precision: 'locality', candidateCount: 1 } },
  ]);
  const report = (
    await app.inject({ url: `/api/ingest-jobs/${doc.jobs[0]?.id ?? 0}/geocoding`, headers: owner })
  ).json() as {
    unplaced: {
      address: string;
      reason: string;
      candidate: { candidateCount: number; alternatives: unknown[] };
    }[];
  };
  t.match(report.unplaced, [
    { address: 'Portsmouth, US', reason: 'low-confidence', candidate: { candidateCount: 4 } },
  ]);
  t.equal(report.unplaced[0]?.candidate.alternatives.length, 4, 'the Portsmouths it hesitated between');
});
