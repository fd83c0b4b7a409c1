import t from 'tap';

// How the Explore page names an event in its list and details: the title mapped at import first
// (issue 28 §4: a "Headline" column is the title, not "Event 4898"), a likely data field for events
// stored without one, the id last.

type EventLike = { id: number; title?: string | null; data: Record<string, unknown> };
const { eventName } = (await import(new URL('../../../web/explore/format.js', import.meta.url).href)) as {
  eventName: (event: EventLike) => string;
};

t.test('the title wins over any guess from data', async (t) => {
  t.equal(eventName({ id: 4898, title: 'Jazz night', data: { name: 'Club A' } }), 'Jazz night');
  t.equal(eventName({ id: 4898, title: 'Jazz night', data: { Headline: 'Jazz night' } }), 'Jazz night');
});

t.test('without a title: a likely field of data, then the id', async (t) => {
  t.equal(
    eventName({ id: 1, title: null, data: { place: '145 km E of Hihifo, Tonga' } }),
    '145 km E of Hihifo, Tonga',
  );
  t.equal(eventName({ id: 2, title: '  ', data: { name: 'Named' } }), 'Named', 'a blank title is no title');
  t.equal(eventName({ id: 4898, data: {} }), 'Event 4898');
});
