import t from 'tap';
import { ValidationError } from '../../../../src/domain/errors.ts';
import { type CqlNode, checkFilter, queryablesOf } from '../../../../src/domain/read/cql2-tree.ts';
import { parseCql2Json } from '../../../../src/domain/read/cql2-json.ts';
import { parseCql2Text } from '../../../../src/domain/read/cql2-text.ts';
import { parseOgcFilter } from '../../../../src/domain/read/ogc-filter.ts';
import { propertyFields } from '../../../../src/domain/read/typed-properties.ts';
import { seededRandom } from '../../../helpers/v1-fixture.ts';

// The CQL2 parsers and the check against the queryables: the trees they give, the same tree from
// both encodings, and hostile input (random and mutated filters) that must always be a
// ValidationError (a 400), never another error.

const fields = propertyFields([
  { name: 'mag', type: 'number' },
  { name: 'place', type: 'string' },
  { name: 'felt', type: 'boolean' },
  { name: 'title', type: 'string' },
]);
const queryables = queryablesOf(fields);
const checked = (text: string) => checkFilter(parseCql2Text(text), queryables);

t.test('cql2-text into the typed tree', async (t) => {
  t.same(checked('mag >= 4.5'), {
    op: 'compare',
    operator: '>=',
    ref: { kind: 'data', key: 'mag', type: 'number' },
    value: 4.5,
  });
  t.same(checked('4.5 < mag'), checked('mag > 4.5'), 'a literal first is flipped');
  t.same(checked("data_title = 'x'"), {
    op: 'compare',
    operator: '=',
    ref: { kind: 'data', key: 'title', type: 'string' },
    value: 'x',
  });
  t.same(checked("title LIKE 'A%'"), {
    op: 'like',
    ref: { kind: 'fixed', name: 'title', type: 'string' },
    pattern: 'A%',
  });
  t.match(checked('mag > 1 and not (felt = true or mag is null)'), {
    op: 'and',
    args: [{ op: 'compare' }, { op: 'not', arg: { op: 'or', args: [{ op: 'compare' }, { op: 'isNull' }] } }],
  });
  t.match(checked('mag not between 1 and 2'), { op: 'not', arg: { op: 'between', low: 1, high: 2 } });
  t.match(checked("place not in ('a', 'b')"), { op: 'not', arg: { op: 'in', values: ['a', 'b'] } });
  t.same(checked('s_intersects(geometry, bbox(170, 0, -170, 10))'), {
    op: 's_intersects',
    geometry: {
      type: 'MultiPolygon',
      coordinates: [
        [
          [
            [170, 0],
            [180, 0],
            [180, 10],
            [170, 10],
            [170, 0],
          ],
        ],
        [
          [
            [-180, 0],
            [-170, 0],
            [-170, 10],
            [-180, 10],
            [-180, 0],
          ],
        ],
      ],
    },
  });
  t.match(checked("t_intersects(eventTimestamp, interval('2024-01-01', '..'))"), {
    op: 't_intersects',
    from: '2024-01-01T00:00:00.000Z',
    to: null,
  });
  t.match(checked("t_intersects(eventTimestamp, interval('..', '2024-01-31'))"), {
    to: '2024-02-01T00:00:00.000Z',
    toExclusive: true,
  });
});

t.test('cql2-json gives the tree cql2-text gives', async (t) => {
  const pairs: Array<[string, unknown]> = [
    ['mag > 3', { op: '>', args: [{ property: 'mag' }, 3] }],
    ["place IN ('a','b')", { op: 'in', args: [{ property: 'place' }, ['a', 'b']] }],
    ['mag BETWEEN 1 AND 2', { op: 'between', args: [{ property: 'mag' }, 1, 2] }],
    ['felt IS NULL', { op: 'isNull', args: [{ property: 'felt' }] }],
    [
      'S_INTERSECTS(geometry, POINT(1 2))',
      { op: 's_intersects', args: [{ property: 'geometry' }, { type: 'Point', coordinates: [1, 2] }] },
    ],
    [
      "T_INTERSECTS(eventTimestamp, TIMESTAMP('2024-01-01T10:00:00Z'))",
      { op: 't_intersects', args: [{ property: 'eventTimestamp' }, { timestamp: '2024-01-01T10:00:00Z' }] },
    ],
  ];
  for (const [text, json] of pairs) {
    t.same(checkFilter(parseCql2Json(JSON.stringify(json)), queryables), checked(text), text);
  }
});

t.test('the filter parameters', async (t) => {
  t.equal(parseOgcFilter({}), null);
  t.match(
    parseOgcFilter({ filter: 'mag > 1', 'filter-crs': 'http://www.opengis.net/def/crs/OGC/1.3/CRS84' }),
    { op: '>', args: [{ property: 'mag' }, { value: 1 }] },
  );
  t.throws(() => parseOgcFilter({ filter: 'mag > 1', 'filter-lang': 'cql' }), ValidationError);
  t.throws(() => parseOgcFilter({ filter: ['a', 'b'] }), ValidationError);
});

/** Parses and checks; true when it passed, false for a ValidationError; any other error fails the test. */
function tryFilter(text: string, language: 'text' | 'json'): boolean {
  try {
    const tree: CqlNode = language === 'text' ? parseCql2Text(text) : parseCql2Json(text);
    checkFilter(tree, queryables);
    return true;
  } catch (error) {
    if (error instanceof ValidationError) return false;
    throw error;
  }
}

t.test('hostile filters: a ValidationError, never another error', async (t) => {
  const random = seededRandom(35);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const pieces = [
    'mag',
    'place',
    'felt',
    'geometry',
    'eventTimestamp',
    'id',
    'nosuch',
    '"mag"',
    '"',
    "'",
    "''",
    '(',
    ')',
    ',',
    'AND',
    'OR',
    'NOT',
    'BETWEEN',
    'IN',
    'LIKE',
    'IS',
    'NULL',
    'TRUE',
    'FALSE',
    '=',
    '<>',
    '<',
    '>=',
    '1',
    '-1e308',
    '1e999',
    '.5',
    "'x'",
    "'%\\'",
    'S_INTERSECTS',
    'T_INTERSECTS',
    'POINT',
    'POLYGON',
    'BBOX',
    'MULTIPOLYGON',
    'TIMESTAMP',
    'DATE',
    'INTERVAL',
    "'2024-01-01'",
    "'..'",
    '__proto__',
    'constructor',
    '\u0000',
    '💥',
    ';',
    '--',
    "'; drop table events; --",
    '[',
    ']',
    '{',
    '}',
  ];
  const valid = [
    "mag > 3 AND place LIKE 'a%'",
    'S_INTERSECTS(geometry, POLYGON((0 0, 1 0, 1 1, 0 0)))',
    "T_INTERSECTS(eventTimestamp, INTERVAL('2024-01-01', '..'))",
    "place IN ('a', 'b') OR NOT felt = TRUE",
  ];
  let passed = 0;
  for (let i = 0; i < 3000; i += 1) {
    let text: string;
    if (i % 3 === 0) {
      text = Array.from({ length: 1 + Math.floor(random() * 12) }, () => pick(pieces)).join(' ');
    } else if (i % 3 === 1) {
      const base = pick(valid);
      const at = Math.floor(random() * base.length);
      text = base.slice(0, at) + pick(pieces) + base.slice(at + Math.floor(random() * 4));
    } else {
      text = Array.from({ length: Math.floor(random() * 40) }, () =>
        String.fromCharCode(Math.floor(random() * 128)),
      ).join('');
    }
    if (tryFilter(text, 'text')) passed += 1;
    tryFilter(text, 'json');
  }
  const jsonPieces = [
    '{"op":"and","args":[',
    '{"property":"mag"}',
    '3',
    '"x"',
    '{"op":"=","args":[',
    ']',
    '}',
    ',',
    '[',
    'null',
    '{"bbox":[1,2]}',
    '{"type":"Polygon","coordinates":[[[0,0]]]}',
    '{"interval":["..",".."]}',
    '{"timestamp":"x"}',
    '{"op":"__proto__","args":[]}',
    '{"property":"constructor"}',
  ];
  for (let i = 0; i < 2000; i += 1) {
    tryFilter(Array.from({ length: 1 + Math.floor(random() * 10) }, () => pick(jsonPieces)).join(''), 'json');
  }
  t.ok(passed > 0, `some mutated filters are still valid (${passed})`);
  // Deep nesting and long input are refused before they cost anything.
  t.notOk(tryFilter('NOT '.repeat(5000) + 'mag > 1', 'text'));
  t.notOk(tryFilter('('.repeat(5000) + 'mag > 1' + ')'.repeat(5000), 'text'));
  t.notOk(tryFilter('['.repeat(3000) + ']'.repeat(3000), 'json'));
  t.notOk(tryFilter(`place = '${'x'.repeat(7990)}'`, 'text'));
});
