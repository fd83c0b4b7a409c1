import type { Test } from 'tap';
import { parseEventFilter, parsePage, type RawQuery } from '../../../src/domain/read/read-query.ts';
import { parseEventSort } from '../../../src/domain/read/sort.ts';
import type { ModelledReads } from '../../fakes/read/event-reader.ts';
import { READ_WORLD, type MakeEventReader } from './event-reader.ts';

// The read model's numbered pages and map features, part of its behaviour suite
// (test/contracts/read/event-reader.ts): each implementation gives events its own ids, so the cases
// compare titles (a page of everything by id maps ids to titles). The orders are worked out by hand
// from READ_WORLD: event 5 has no title and no location.

type PageEvent = { id: number; title: string | null } & Record<string, unknown>;

async function page(reader: ModelledReads, query: RawQuery): Promise<{ events: PageEvent[]; total: number }> {
  const answer = await reader.listEventsPage(
    null,
    parseEventFilter(query),
    parseEventSort(query.sort),
    parsePage(query),
  );
  return { events: JSON.parse(answer.eventsJson.toString('utf8')) as PageEvent[], total: answer.totalDocs };
}

const titles = async (reader: ModelledReads, query: RawQuery) =>
  (await page(reader, query)).events.map((event) => event.title);

type Feature = {
  geometry: { coordinates: [number, number] };
  properties: { type: string; title?: string; count?: number; eventIds?: number[] };
};

export function pageAndFeatureContract(t: Test, make: MakeEventReader): void {
  t.test('pages: each sort in both directions, ties broken by id in the same direction', async (t) => {
    const reader = await make(t, READ_WORLD);
    const byTime = [
      'New York fair',
      null,
      'Fiji west',
      'Fiji east',
      'Paris strike',
      'Berlin march',
      'Tokyo show',
    ];
    t.same(await titles(reader, {}), byTime, 'the default: newest first');
    t.same(await titles(reader, { sort: 'eventTimestamp' }), [...byTime].reverse());
    const byId = [
      'Berlin march',
      'Paris strike',
      'Fiji east',
      'Fiji west',
      null,
      'Tokyo show',
      'New York fair',
    ];
    t.same(await titles(reader, { sort: 'id' }), byId);
    t.same(await titles(reader, { sort: '-id' }), [...byId].reverse());
    const byTitle = [
      'Berlin march',
      'Fiji east',
      'Fiji west',
      'New York fair',
      'Paris strike',
      'Tokyo show',
      null,
    ];
    t.same(await titles(reader, { sort: 'title' }), byTitle, 'by title, an event without one last');
    t.same(await titles(reader, { sort: '-title' }), [...byTitle].reverse(), 'descending: without one first');
    // Catalog and dataset sort by their ids (the world's order of creation), the events of one by id.
    t.same(await titles(reader, { sort: 'catalog' }), byId, 'by catalog');
    t.same(
      await titles(reader, { sort: '-catalog' }),
      ['New York fair', 'Tokyo show', null, 'Fiji west', 'Fiji east', 'Paris strike', 'Berlin march'],
      'by catalog descending: ids descending within one',
    );
    t.same(await titles(reader, { sort: 'dataset' }), byId, 'by dataset');
  });

  t.test('pages by number: the page of the sort and the total of the filter', async (t) => {
    const reader = await make(t, READ_WORLD);
    const second = await page(reader, { sort: 'id', limit: '3', page: '2' });
    t.same(
      second.events.map((event) => event.title),
      ['Fiji west', null, 'Tokyo show'],
    );
    t.equal(second.total, 7);
    const news = await page(reader, { catalog: 'news', limit: '2' });
    t.same(
      news.events.map((event) => event.title),
      [null, 'Fiji west'],
    );
    t.equal(news.total, 5, 'the total counts the whole filter, not the page');
    t.same(await page(reader, { catalog: 'news', limit: '2', page: '9' }), { events: [], total: 5 });
  });

  t.test('an event of a page: its dataset, catalog, location and time as the API shows them', async (t) => {
    const reader = await make(t, READ_WORLD);
    const [berlin, , , , unlocated] = (await page(reader, { sort: 'id' })).events;
    const {
      id: _id,
      dataset,
      provenance,
      ...rest
    } = berlin as PageEvent & { dataset: Record<string, unknown>; provenance: Record<string, unknown> };
    t.match(
      provenance,
      { shown: true, importJob: null, row: null, storedAt: String, changedAt: String },
      'its provenance: stored outside an import (no job, no row), with its times',
    );
    t.same(
      { ...rest, dataset: { ...dataset, id: undefined } },
      {
        title: 'Berlin march',
        dataset: { id: undefined, title: 'Protests', catalog: 'news' },
        data: {},
        location: { longitude: 13.4, latitude: 52.5 },
        locatedBy: { method: 'coordinates' },
        eventTimestamp: '2024-01-10T12:00:00.000Z',
        isValid: true,
      },
    );
    t.same([unlocated?.location, unlocated?.locatedBy], [null, null], 'no location, nothing located it');
  });

  t.test('map features: exact locations and grid cells, a lone event a point with its title', async (t) => {
    const reader = await make(t, READ_WORLD);
    const everything = (await page(reader, { sort: 'id' })).events;
    const titleOf = new Map(everything.map((event) => [event.id, event.title]));
    const described = (json: string) =>
      (JSON.parse(json) as Feature[])
        .map(({ geometry, properties }) => ({
          at: geometry.coordinates.map((value) => Math.round(value * 1e6) / 1e6),
          type: properties.type,
          title: properties.title,
          count: properties.count,
          events: properties.eventIds?.map((id) => titleOf.get(id)),
        }))
        .sort((a, b) => a.at[0]! - b.at[0]! || a.at[1]! - b.at[1]!);
    const point = (title: string, at: number[]) => ({
      at,
      type: 'event-point',
      title,
      count: undefined,
      events: undefined,
    });
    const exact = described(await reader.clusterFeatures(null, parseEventFilter({}), null));
    t.same(
      exact,
      [
        point('Fiji west', [-179.7, -16.2]),
        point('New York fair', [-74, 40.7]),
        point('Paris strike', [2.35, 48.85]),
        point('Berlin march', [13.4, 52.5]),
        point('Tokyo show', [139.69, 35.68]),
        point('Fiji east', [179.6, -16.5]),
      ],
      'every located event at its place; the one without a location left out',
    );
    // Level 2 (4 × 4 cells): Berlin and Paris share the cell x 2, y 1; the rest are alone.
    const cells = described(await reader.clusterFeatures(null, parseEventFilter({}), 2));
    t.same(
      cells,
      [
        point('Fiji west', [-179.7, -16.2]),
        point('New York fair', [-74, 40.7]),
        {
          at: [7.875, 50.675],
          type: 'event-cluster',
          title: undefined,
          count: 2,
          events: ['Berlin march', 'Paris strike'],
        },
        point('Tokyo show', [139.69, 35.68]),
        point('Fiji east', [179.6, -16.5]),
      ],
      'a cell of two events: a cluster at their mean position with both ids',
    );
    t.same(
      described(
        await reader.clusterFeatures(
          null,
          parseEventFilter({ datasets: 'protests', startDate: '2024-01-15' }),
          2,
        ),
      ),
      [point('Paris strike', [2.35, 48.85])],
      'the filter narrows the cell to the one event left: a point again',
    );
  });
}
