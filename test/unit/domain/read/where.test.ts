import t from 'tap';
import { ValidationError } from '../../../../src/domain/errors.ts';
import { parseCollectionSort } from '../../../../src/domain/read/sort.ts';
import { type FieldWhitelist, parseWhere, whereTreeFromQuery } from '../../../../src/domain/read/where.ts';

const fields: FieldWhitelist = {
  id: { type: 'number' },
  title: { type: 'string' },
  isPublic: { type: 'boolean' },
  createdAt: { type: 'date' },
  secret: { type: 'string', filter: false, sort: false },
};
const parse = (query: Record<string, unknown>) => parseWhere(whereTreeFromQuery(query), fields);

t.test('conditions become a typed tree', async (t) => {
  t.equal(parse({ limit: '5' }), null, 'no where, no tree');
  t.same(parse({ 'where[title][equals]': 'x' }), { field: 'title', operator: 'equals', value: 'x' });
  t.same(parse({ 'where[id][in]': '1,2' }), { field: 'id', operator: 'in', value: [1, 2] });
  t.same(parse({ 'where[id][in]': ['3', '4'] }), { field: 'id', operator: 'in', value: [3, 4] });
  t.same(parse({ 'where[isPublic][exists]': 'false' }), {
    field: 'isPublic',
    operator: 'exists',
    value: false,
  });
  t.same(parse({ 'where[createdAt][less_than]': '2024-01-01' }), {
    field: 'createdAt',
    operator: 'less_than',
    value: '2024-01-01T00:00:00.000Z',
  });
  t.same(parse({ 'where[id][greater_than]': '1', 'where[id][less_than]': '9' }), {
    and: [
      { field: 'id', operator: 'greater_than', value: 1 },
      { field: 'id', operator: 'less_than', value: 9 },
    ],
  });
  t.same(parse({ 'where[or][1][title][equals]': 'b', 'where[or][0][title][equals]': 'a' }), {
    or: [
      { field: 'title', operator: 'equals', value: 'a' },
      { field: 'title', operator: 'equals', value: 'b' },
    ],
  });
});

t.test('malformed input is a ValidationError naming the problem', async (t) => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ 'where[nope][equals]': '1' }, /unknown field "nope"/],
    [{ 'where[secret][equals]': '1' }, /unknown field "secret"/],
    [{ 'where[title][regex]': '1' }, /unknown operator "regex"/],
    [{ 'where[id][equals]': 'x' }, /takes a number/],
    [{ 'where[isPublic][equals]': 'yes' }, /true or false/],
    [{ 'where[createdAt][equals]': 'now' }, /ISO 8601/],
    [{ 'where[id][like]': '1' }, /text fields only/],
    [{ 'where[title]': 'x' }, /needs an operator/],
    [{ 'where[or][a][title][equals]': 'x' }, /numbered conditions/],
    [{ 'where[title][equals]': ['a', 'b'] }, /more than once/],
    [{ 'where[[title]][equals]': 'x' }, /malformed/],
    [{ [`where${'[or][0]'.repeat(8)}[title][equals]`]: 'x' }, /too deeply/],
  ];
  for (const [query, message] of cases) {
    t.throws(() => parse(query), ValidationError, Object.keys(query)[0] ?? '');
    t.throws(() => parse(query), { message }, Object.keys(query)[0] ?? '');
  }
  const many = Object.fromEntries(
    Array.from({ length: 51 }, (_, i) => [`where[or][${i}][id][equals]`, String(i)]),
  );
  t.throws(() => parse(many), { message: /more than 50 conditions/ });
});

t.test('sort', async (t) => {
  t.same(parseCollectionSort('-createdAt,title', fields), [
    { field: 'createdAt', descending: true },
    { field: 'title', descending: false },
  ]);
  t.same(parseCollectionSort(undefined, fields), []);
  t.throws(() => parseCollectionSort('secret', fields), { message: /cannot sort by "secret"/ });
  t.throws(() => parseCollectionSort('id;drop table users', fields), ValidationError);
});

t.test('prototype keys are refused by name and never reach Object.prototype', async (t) => {
  for (const key of ['__proto__', 'constructor', 'prototype']) {
    t.throws(() => whereTreeFromQuery({ [`where[${key}][polluted]`]: 'yes' }), {
      message: new RegExp(`forbidden key "${key}"`),
    });
    t.throws(() => whereTreeFromQuery({ [`where[or][0][${key}][equals]`]: 'yes' }), ValidationError);
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
  const tree = whereTreeFromQuery({ 'where[title][equals]': 'x' });
  t.equal(Object.getPrototypeOf(tree), null, 'the tree has no prototype');
  t.throws(() => parse({ 'where[toString][equals]': 'x' }), { message: /unknown field "toString"/ });
  t.throws(() => parseCollectionSort('constructor', fields), { message: /cannot sort by "constructor"/ });
});

t.test('contains and like have a budget of their own', async (t) => {
  const fifty = Object.fromEntries(
    Array.from({ length: 50 }, (_, i) => [`where[or][${i}][title][contains]`, `abc${i}`]),
  );
  t.throws(() => parse(fifty), { message: /more than 5 contains\/like patterns/ });
  t.throws(() => parse({ 'where[title][like]': 'a b c d e f' }), { message: /more than 5/ });
  t.throws(() => parse({ 'where[title][contains]': 'x'.repeat(101) }), { message: /longer than 100/ });
  t.ok(parse({ 'where[title][like]': 'a b c', 'where[or][0][title][contains]': 'd' }), 'within the budget');
});

t.test('dates outside years 0001-9999 are refused', async (t) => {
  t.throws(() => parse({ 'where[createdAt][greater_than]': '0000-01-01' }), { message: /supported years/ });
  t.ok(parse({ 'where[createdAt][greater_than]': '0001-01-01' }));
});
