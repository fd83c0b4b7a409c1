import t from 'tap';
import { ValidationError } from '../../../../src/domain/errors.ts';
import { checkPageBytes, checkPageSize } from '../../../../src/domain/read/page-bytes.ts';

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

t.test('a page already encoded meets the same bound, in its bytes, counted only when refused', async (t) => {
  const event = JSON.stringify({ id: 1, data: { text: 'x'.repeat(1000) } });
  const page = Buffer.from(`[${Array.from({ length: 100 }, () => event).join(',')}]`);
  let counted = 0;
  const count = () => {
    counted += 1;
    return 100;
  };
  t.doesNotThrow(() => checkPageSize(page.length, count, 100, 200_000));
  t.equal(counted, 0, 'a page that fits is not counted');
  t.throws(() => checkPageSize(page.length, count, 100, 50_000), {
    message: /limit=4\d or fewer/,
    code: 'PAGE_TOO_LARGE',
  });
  // 400 characters of 'é' are 800 bytes, and a 4-byte character is 4: 1,207 bytes with the JSON.
  const accents = Buffer.from(JSON.stringify(['é'.repeat(400), '😀'.repeat(100)]));
  t.doesNotThrow(() => checkPageSize(accents.length, () => 2, 2, 1_300));
  t.throws(() => checkPageSize(accents.length, () => 2, 2, 1_100), { message: /limit=1 or fewer/ });
});
