import t from 'tap';
import { seedDemo } from '../../../../src/application/site/seed-demo.ts';
import type { NewEvent } from '../../../../src/domain/read/events.ts';
import type { SourceRow } from '../../../../src/domain/ingest/rows.ts';
import type { EventStore } from '../../../../src/ports/ingest/event-store.ts';

// seed-demo with a hand-written fake of the event store: the rows go through the ingestion
// pipeline's row rules, so dates, coordinates and ids are read as an import would read them.

function fakeEvents() {
  const stored = new Map<string, NewEvent>();
  const events: EventStore = {
    ensureSystemCatalog: async () => 1,
    ensureSystemDataset: async () => 2,
    async insertEvents(_datasetId, batch) {
      let inserted = 0;
      for (const event of batch) {
        if (stored.has(event.uniqueId)) continue;
        stored.set(event.uniqueId, event);
        inserted += 1;
      }
      return { inserted };
    },
  };
  return { events, stored };
}

async function* rows(...list: SourceRow[]): AsyncGenerator<SourceRow> {
  yield* list;
}

const HEADER = ['time', 'latitude', 'longitude', 'mag', 'place', 'id'];

t.test('seed-demo stores valid USGS rows and counts the rest as invalid', async (t) => {
  const { events, stored } = fakeEvents();
  const result = await seedDemo(
    { events },
    rows(
      HEADER,
      ['2026-03-28T01:35:09+02:00', '-15.9208', '-172.4385', '5.4', '145 km E of Hihifo, Tonga', 'us1'],
      ['2026-03-27T10:00:00Z', '0', '0', '4.6', 'somewhere', 'us2'],
      [],
      ['yesterday-ish', '10', '10', '4.5', 'bad date', 'us3'],
      ['2026-03-27T10:00:00Z', '91', '0', '4.5', 'bad latitude', 'us4'],
      ['2026-03-27T10:00:00Z', '10', '-180.5', '4.5', 'bad longitude', 'us5'],
      ['2026-03-27T10:00:00Z', '10', '10', '4.5', 'no id', ''],
      { malformed: 'an unterminated quote' },
      ['2026-03-27T10:00:00Z', '10'],
      [''],
    ),
  );
  t.same(result, { catalogId: 1, datasetId: 2, read: 9, inserted: 2, invalid: 7 });
  t.same(stored.get('us1'), {
    uniqueId: 'us1',
    title: '145 km E of Hihifo, Tonga',
    data: Object.assign(Object.create(null), {
      time: '2026-03-28T01:35:09+02:00',
      latitude: -15.9208,
      longitude: -172.4385,
      mag: 5.4,
      place: '145 km E of Hihifo, Tonga',
      id: 'us1',
    }),
    location: { latitude: -15.9208, longitude: -172.4385 },
    eventTimestamp: '2026-03-27T23:35:09.000Z',
    isValid: true,
  });
  t.equal(stored.get('us2')?.location, null, '(0,0) is no location, not a point in the Gulf of Guinea');

  const again = await seedDemo({ events }, rows(HEADER, ['2026-03-27T10:00:00Z', '1', '1', '5', 'x', 'us1']));
  t.equal(again.inserted, 0, 'an id stored before is not stored again');
});
