import t from 'tap';
import { ValidationError } from '../../../../src/domain/errors.ts';
import { checkPageBytes } from '../../../../src/domain/read/page-bytes.ts';

t.test('a page over its byte bound is refused naming a limit that fits', async (t) => {
  const doc = { id: 1, data: { text: 'x'.repeat(1000) } };
  const docs = Array.from({ length: 100 }, () => doc);
  t.doesNotThrow(() => checkPageBytes(docs, 100, 200_000));
  t.throws(() => checkPageBytes(docs, 100, 50_000), ValidationError);
  t.throws(() => checkPageBytes(docs, 100, 50_000), {
    message: /limit=4\d or fewer/,
    code: 'PAGE_TOO_LARGE',
  });
  t.throws(() => checkPageBytes([{ big: 'é'.repeat(600) }], 10, 1_000), { message: /limit=1 or fewer/ });
});
