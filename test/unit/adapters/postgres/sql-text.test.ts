import { createHash } from 'node:crypto';
import t from 'tap';
import { Type } from 'typebox';
import { prepared, row, sql, statementName } from '../../../../src/adapters/postgres/database.ts';
import { joinSql, query, type Sql, sqlText, typed } from '../../../../src/adapters/postgres/sql-text.ts';

const Row = row(Type.Object({ n: Type.Number() }));

// The same statement written with Slonik's fragments and with sql-text's: the text, the values and
// the parser must be equal, so that the pool runs exactly what it ran before.
function both(
  build: <F>(tag: (s: TemplateStringsArray, ...v: unknown[]) => F, join: (m: F[], g: string) => F) => F,
) {
  const slonik = build(
    (s, ...v) => sql.fragment(s, ...(v as never[])) as never,
    (members, glue) => {
      if (glue !== ' and ') throw new Error('only " and " is written for Slonik here');
      return sql.join(members as never[], sql.fragment` and `) as never;
    },
  );
  const lazy = build(
    (s, ...v) => sqlText(s, ...(v as never[])) as never,
    (members, glue) => joinSql(members as Sql[], glue) as never,
  );
  return {
    slonik: sql.type(Row)`select ${slonik as never}`,
    lazy: query(Row, sqlText`select ${lazy as never}`),
  };
}

t.test('nested pieces, joins, arrays and Slonik fragments render as Slonik renders them', async (t) => {
  const foreign = sql.fragment`d.id = any(${sql.array([1, 2], 'int8')}) and d.slug = ${'a$slonik_1'}`;
  const { slonik, lazy } = both((tag, join) => {
    const leaf = (n: number) => tag`e.x = ${n} and e.y between ${n + 1} and ${n + 2}`;
    const deep = tag`(${tag`(${tag`(${leaf(1)}) or (${leaf(4)})`}) and ${leaf(7)}`})`;
    const parts = [deep, tag`e.flag = ${true} and e.name = ${"it's"} and e.none is ${null}`];
    return tag`* from events e where ${join(parts, ' and ')} and ${foreign} and e.ids = any(${sql.array([3, 4, 5], 'int8')}) limit ${10}`;
  });
  t.equal(lazy.sql, slonik.sql);
  t.same(lazy.values, slonik.values);
  t.equal(lazy.parser, slonik.parser);
  t.equal(lazy.type, slonik.type);
  t.match(lazy.sql, /\$slonik_16\b/, 'placeholders numbered through the whole statement');
  t.notOk(lazy.sql.includes('$slonik_17'));
});

t.test('an empty join, a single member, and the typed tag', async (t) => {
  t.equal(query(Row, joinSql([], ' and ')).sql, '');
  t.equal(query(Row, joinSql([sqlText`a = ${1}`], ' and ')).sql, 'a = $slonik_1');
  const q = typed(Row)`select ${sqlText`${1}::int8`} + ${2} as n`;
  t.equal(q.sql, 'select $slonik_1::int8 + $slonik_2 as n');
  t.same(q.values, [1, 2]);
});

t.test('pieces are reusable: rendering never changes them', async (t) => {
  const piece = sqlText`x = ${5}`;
  const a = query(Row, sqlText`select ${piece}, ${piece}`);
  const b = query(Row, sqlText`select ${piece}`);
  t.equal(a.sql, 'select x = $slonik_1, x = $slonik_2');
  t.same(a.values, [5, 5]);
  t.equal(b.sql, 'select x = $slonik_1');
});

t.test('values that are no value are refused', async (t) => {
  t.throws(() => query(Row, sqlText`select ${undefined as never}`));
  t.throws(() => query(Row, sqlText`select ${{ not: 'a token' } as never}`));
});

t.test('statement names: the SHA-1 of the text, remembered, different texts different names', async (t) => {
  const text = 'select 1 as n';
  const expected = `chronomap_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
  t.equal(statementName(text), expected);
  t.equal(statementName(text), expected, 'the same name when remembered');
  t.not(statementName('select 2 as n'), expected);
  // More texts than the names kept: a name computed again is the same name.
  for (let i = 0; i < 600; i += 1) statementName(`select ${i} as n`);
  t.equal(statementName(text), expected);
  const token = prepared(typed(Row)`select ${1} as n`);
  t.equal(token.name, statementName('select $slonik_1 as n'));
});
