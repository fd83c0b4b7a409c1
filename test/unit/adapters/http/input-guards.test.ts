import t from 'tap';
import { ValidationError } from '../../../../src/domain/errors.ts';
import { parseHostileJson, parseJsonField, strictId } from '../../../../src/adapters/http/input-guards.ts';

t.test(
  'JSON bodies: prototype keys, NUL characters and non-finite numbers are refused by name',
  async (t) => {
    t.same(parseHostileJson('{"a":[1,{"b":"c"}]}'), { a: [1, { b: 'c' }] });
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      t.throws(() => parseHostileJson(`{"x":{"${key}":{"polluted":1}}}`), {
        message: `the JSON key "${key}" is not allowed`,
      });
    }
    t.throws(() => parseHostileJson('{"email":"a\\u0000b@x.y"}'), { message: /"email" holds a NUL/ });
    t.throws(() => parseHostileJson('{"a\\u0000":1}'), { message: /NUL/ });
    t.throws(() => parseHostileJson('{"n":1e400}'), { message: /"n" is out of range/ });
    t.throws(() => parseHostileJson('{"n":'), ValidationError);
    t.throws(() => parseHostileJson(''), { message: /empty/ });
    t.throws(() => parseJsonField('{"__proto__":{}}', 'settings'), { message: /^settings: / });
    t.equal(({} as Record<string, unknown>).polluted, undefined);
  },
);

t.test('ids: decimal digits within PostgreSQL integer range', async (t) => {
  t.equal(strictId('12'), 12);
  t.equal(strictId('2147483647'), 2147483647);
  for (const raw of [
    '+1',
    '1e3',
    'Infinity',
    '1e308',
    '0x10',
    ' 1',
    '2147483648',
    '0',
    '-1',
    '',
    undefined,
  ]) {
    t.equal(strictId(raw), null, String(raw));
  }
});
