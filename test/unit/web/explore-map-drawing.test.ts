import { createExpression } from '@maplibre/maplibre-gl-style-spec';
import t from 'tap';

type Mode = 'auto' | 'markers' | 'tiles';
type ExploreState = { mode: Mode } & Record<string, unknown>;

// The page's modules are plain JavaScript for the browser (type-checked by web/tsconfig.json), so
// they are loaded by URL here, with the types of what the test uses.
const page = (file: string) => import(new URL(`../../../web/explore/${file}`, import.meta.url).href);
const { shortCount } = (await page('format.js')) as { shortCount: (count: number) => string };
const { DEFAULT_STATE, readState, writeState } = (await page('state.js')) as {
  DEFAULT_STATE: ExploreState;
  readState: (search: string) => ExploreState;
  writeState: (state: ExploreState) => string;
};
const { shortCountExpression } = (await page('tiles.js')) as {
  shortCountExpression: (count: unknown) => unknown;
};

// The Explore page's map drawing without a browser: the vector tiles' count labels (a MapLibre
// expression, evaluated here by MapLibre's own style-spec) read as the markers' labels, and the
// mode in the URL (automatic is the default and leaves no `mode` in a shared link).

t.test('a tile label reads as the marker label of the same count', async (t) => {
  const parsed = createExpression(shortCountExpression(['get', 'count']), 'label');
  if (parsed.result !== 'success') throw new Error(JSON.stringify(parsed.value));
  const expression = parsed.value;
  const counts = [1, 9, 42, 999, 1000, 1049, 1050, 1234, 9949, 10_000, 10_499, 15_500, 999_499];
  counts.push(1_000_000, 1_049_999, 1_250_000, 9_940_000, 10_000_000, 12_345_678, 987_654_321);
  for (const count of counts) {
    const label = expression.evaluate({ zoom: 0 }, { type: 'Point', properties: { count } } as never);
    t.equal(label, shortCount(count), `${count}`);
  }
});

t.test('automatic drawing is the default, and only other modes go into the URL', async (t) => {
  t.equal(DEFAULT_STATE.mode, 'auto');
  t.equal(readState('').mode, 'auto');
  t.equal(readState('?mode=tiles').mode, 'tiles');
  t.equal(readState('?mode=markers').mode, 'markers');
  t.equal(readState('?mode=__proto__').mode, 'auto', 'anything else is the default');
  t.notMatch(writeState({ ...DEFAULT_STATE }), /mode=/);
  t.match(writeState({ ...DEFAULT_STATE, mode: 'markers' }), /mode=markers/);
  t.match(writeState({ ...DEFAULT_STATE, mode: 'tiles' }), /mode=tiles/);
});
