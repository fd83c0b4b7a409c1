import t from 'tap';
import {
  applySelect,
  parsePagination,
  parseSelect,
  tooManyForOneAnswer,
  UNPAGINATED_MAX,
} from '../../../../src/domain/collections/payload-options.ts';

const FIELDS = ['id', 'slug', 'title', 'description', 'isPublic'];
const DOC = { id: 7, slug: 'a', title: 'A', description: null, isPublic: true, internal: 'never sent' };

t.test('select[field]=true keeps those fields and the id, nothing else', async (t) => {
  const selection = parseSelect({ 'select[title]': 'true', 'select[slug]': '1', limit: 5 }, FIELDS);
  t.same(applySelect(DOC, selection), { id: 7, slug: 'a', title: 'A' });
});

t.test("select[field]=false leaves those out, and keeps only the schema's fields", async (t) => {
  const selection = parseSelect({ 'select[description]': 'false', 'select[id]': 'false' }, FIELDS);
  t.same(applySelect(DOC, selection), { id: 7, slug: 'a', title: 'A', isPublic: true }, 'never the id out');
});

t.test('no select: the document as it is', async (t) => {
  t.equal(parseSelect({ 'where[slug][equals]': 'a' }, FIELDS), null);
  t.same(applySelect(DOC, null), DOC);
});

t.test('hostile selects are 400s naming the parameter', async (t) => {
  for (const query of [
    { 'select[password]': 'true' },
    { 'select[title][x]': 'true' },
    { 'select[__proto__]': 'true' },
    { 'select[title]': 'yes' },
    { 'select[title]': ['true', 'true'] },
    { 'select[title]': 'true', 'select[slug]': 'false' },
    { select: 'title' },
  ]) {
    t.throws(
      () => parseSelect(query, FIELDS),
      { name: 'ValidationError', field: 'select' },
      JSON.stringify(query),
    );
  }
});

t.test('pagination', async (t) => {
  t.equal(parsePagination(undefined), true);
  t.equal(parsePagination('true'), true);
  t.equal(parsePagination('false'), false);
  t.throws(() => parsePagination('no'), { name: 'ValidationError', field: 'pagination' });
  t.match(tooManyForOneAnswer(UNPAGINATED_MAX + 1), { code: 'PAGINATION_CAP', message: /at most 1000/ });
});
