import t from 'tap';
import { isSlug, MAX_SLUG_LENGTH, parseSlug } from '../../../../src/domain/collections/slugs.ts';
import { ValidationError } from '../../../../src/domain/errors.ts';
import { SLUG_PATTERN as SCRAPER_SLUG } from '../../../../src/domain/scrapers/manifest.ts';

t.test('a catalog or dataset slug: lower-case words joined by single hyphens, at most 128', async (t) => {
  t.equal(MAX_SLUG_LENGTH, 128, "the spec's slug length");
  for (const slug of ['a', 'a1', 'usgs-earthquakes', '2024-floods', 'a'.repeat(128)])
    t.ok(isSlug(slug), slug);
  for (const slug of ['', 'A', 'a_b', 'a b', '-a', 'a-', 'a--b', 'ä', 'a\u0000', 'a'.repeat(129)])
    t.notOk(isSlug(slug), JSON.stringify(slug.slice(0, 12)));
});

t.test('every slug it accepts also meets the spec rule (lowercase letters, digits, hyphens)', async (t) => {
  for (const slug of ['a', 'a-b-c', '0-9', 'a'.repeat(128)]) {
    t.ok(isSlug(slug));
    t.ok(SCRAPER_SLUG.test(slug), `${slug.slice(0, 12)} is a spec slug too`);
  }
});

t.test('parseSlug: the slug, or a 400 naming the field', async (t) => {
  t.equal(parseSlug('floods', 'slug'), 'floods');
  t.throws(() => parseSlug('a'.repeat(129), 'slug'), {
    constructor: ValidationError,
    field: 'slug',
    message: /slug must be .* at most 128 characters/,
  });
  t.throws(() => parseSlug('Floods', 'slug'), {
    constructor: ValidationError,
    field: 'slug',
    message: /Floods/,
  });
});
