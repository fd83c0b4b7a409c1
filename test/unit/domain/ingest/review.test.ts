import t from 'tap';
import { ValidationError } from '../../../../src/domain/errors.ts';
import {
  duplicateReviewFor,
  geocodingReviewReason,
  parseReviewDuplicates,
  reviewReasons,
} from '../../../../src/domain/ingest/review.ts';

// When an automated import stops for review, and which duplicates count: a recurring source's
// later runs find their own rows in the dataset and must not stop for them (issue 28 §2).

const clean = { rowsTotal: 10, internal: 0, external: 0, invalidRows: 0, drift: null };

t.test('a recurring source reviews stored rows on its first import only, by default', async (t) => {
  t.equal(duplicateReviewFor('first-run', false), 'all', 'first import: rows from elsewhere count');
  t.equal(duplicateReviewFor('first-run', true), 'internal', 'later runs: only rows repeated in the file');
  t.equal(duplicateReviewFor('always', true), 'all');
  t.equal(duplicateReviewFor('always', false), 'all');
  t.equal(duplicateReviewFor('never', false), 'none');
  t.equal(duplicateReviewFor('never', true), 'none');
});

t.test('an unchanged feed (every row stored) asks for review only when stored rows count', async (t) => {
  const unchanged = { ...clean, external: 10 };
  t.same(reviewReasons({ ...unchanged, duplicateReview: 'internal' }), []);
  t.same(reviewReasons({ ...unchanged, duplicateReview: 'none' }), []);
  t.same(reviewReasons({ ...unchanged, duplicateReview: 'all' }), [
    'duplicate rate 100% over 50%: 10 already in the dataset of 10 rows',
  ]);
  t.same(
    reviewReasons(unchanged),
    reviewReasons({ ...unchanged, duplicateReview: 'all' }),
    'a job from before the setting counts every duplicate, as it did then',
  );
});

t.test(
  'rows repeated inside the file ask for review on any run, unless duplicates are never reviewed',
  async (t) => {
    const repeated = { ...clean, internal: 6, external: 3 };
    t.same(reviewReasons({ ...repeated, duplicateReview: 'internal' }), [
      'duplicate rate 60% over 50%: 6 repeated in the file of 10 rows',
    ]);
    t.same(reviewReasons({ ...repeated, duplicateReview: 'all' }), [
      'duplicate rate 90% over 50%: 6 repeated in the file, 3 already in the dataset of 10 rows',
    ]);
    t.same(reviewReasons({ ...repeated, duplicateReview: 'none' }), []);
    t.same(
      reviewReasons({ ...clean, internal: 5, duplicateReview: 'internal' }),
      [],
      'exactly half is not over',
    );
  },
);

t.test('each reason names its numbers: drift, invalid rows', async (t) => {
  t.same(
    reviewReasons({
      ...clean,
      invalidRows: 2,
      drift: { added: ['depth'], removed: [], changed: [], breaking: false },
    }),
    ['schema drift: added depth', 'invalid rows 20% over 10%: 2 of 10 rows'],
  );
  t.same(reviewReasons({ ...clean, rowsTotal: 0 }), [], 'an empty file has no rates');
});

t.test('the geocoding reason names the addresses not located', async (t) => {
  t.equal(geocodingReviewReason(3, 2), 'geocoding failure rate 67% over 30%: 2 of 3 addresses not located');
  t.equal(geocodingReviewReason(10, 3), null, 'exactly the threshold is not over');
  t.equal(geocodingReviewReason(0, 0), null, 'no addresses, no rate');
});

t.test('reviewDuplicates takes the three settings and defaults to first-run', async (t) => {
  t.equal(parseReviewDuplicates(undefined), 'first-run');
  t.equal(parseReviewDuplicates('never'), 'never');
  t.throws(() => parseReviewDuplicates('sometimes'), ValidationError);
  t.throws(() => parseReviewDuplicates(1), ValidationError);
});
