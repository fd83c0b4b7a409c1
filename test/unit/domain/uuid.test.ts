import t from 'tap';
import { isUuid } from '../../../src/domain/uuid.ts';

// The one check that text names a database-made id before it reaches a query (src/domain/uuid.ts).

t.test('a UUID in its text form, any case; nothing else', async (t) => {
  t.ok(isUuid('0b5e8a56-3f1c-4d2e-9a7b-1c2d3e4f5a6b'));
  t.ok(isUuid('0B5E8A56-3F1C-4D2E-9A7B-1C2D3E4F5A6B'));
  for (const text of [
    '',
    '0b5e8a563f1c4d2e9a7b1c2d3e4f5a6b',
    '{0b5e8a56-3f1c-4d2e-9a7b-1c2d3e4f5a6b}',
    '0b5e8a56-3f1c-4d2e-9a7b-1c2d3e4f5a6b\n',
    ' 0b5e8a56-3f1c-4d2e-9a7b-1c2d3e4f5a6b',
    '0b5e8a56-3f1c-4d2e-9a7b-1c2d3e4f5a6g',
    "0b5e8a56-3f1c-4d2e-9a7b-1c2d3e4f5a6b' or '1'='1",
  ])
    t.notOk(isUuid(text), JSON.stringify(text));
});
