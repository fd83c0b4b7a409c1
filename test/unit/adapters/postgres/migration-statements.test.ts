import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import {
  concurrentIndexNames,
  splitStatements,
} from '../../../../src/adapters/postgres/migration-statements.ts';
import { loadMigrations } from '../../../../src/adapters/postgres/migrator.ts';

t.test('statements split at the semicolons that end them, not those quoted or commented', async (t) => {
  const text = [
    '-- chronomap:no-transaction',
    "create index concurrently if not exists a on t ((x || ';'));",
    '/* a comment; /* nested; */ still comment; */',
    "create function f() returns text language sql as $body$ select ';'; $body$;",
    "select \"odd;name\", $$;$$, 'it''s;' from t -- trailing; comment",
    ';;',
    '-- only a comment; at the end',
  ].join('\n');
  t.same(splitStatements(text), [
    "-- chronomap:no-transaction\ncreate index concurrently if not exists a on t ((x || ';'))",
    "/* a comment; /* nested; */ still comment; */\ncreate function f() returns text language sql as $body$ select ';'; $body$",
    "select \"odd;name\", $$;$$, 'it''s;' from t -- trailing; comment",
  ]);
});

t.test('the indexes a statement builds CONCURRENTLY, as written', async (t) => {
  t.same(concurrentIndexNames('CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "Odd Name" ON t (x)'), [
    '"Odd Name"',
  ]);
  t.same(concurrentIndexNames('create index concurrently public.events_x on events (x)'), [
    'public.events_x',
  ]);
  t.same(concurrentIndexNames('create index events_x on events (x)'), [], 'not CONCURRENTLY');
});

t.test('the no-transaction marker is the first line of a file, exactly', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-migrations-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, '0001_plain.sql'), 'create table a (id int);');
  writeFileSync(
    path.join(dir, '0002_outside.sql'),
    '-- chronomap:no-transaction\ncreate index concurrently b on a (id);',
  );
  writeFileSync(path.join(dir, '0003_later.sql'), 'select 1;\n-- chronomap:no-transaction\n');
  t.same(
    loadMigrations(dir).map((m) => [m.name, m.transactional]),
    [
      ['0001_plain.sql', true],
      ['0002_outside.sql', false],
      ['0003_later.sql', true],
    ],
  );
});
