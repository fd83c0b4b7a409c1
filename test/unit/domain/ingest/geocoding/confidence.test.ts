import t from 'tap';
import {
  confidenceVerdict,
  DEFAULT_MIN_CONFIDENCE,
} from '../../../../../src/domain/ingest/geocoding/confidence.ts';

// Both geocoders refuse a place under the threshold through this one test; the threshold itself is
// enough.

t.test('a place at the threshold is located, one under it is low confidence', async (t) => {
  t.equal(confidenceVerdict(DEFAULT_MIN_CONFIDENCE, DEFAULT_MIN_CONFIDENCE), 'located');
  t.equal(confidenceVerdict(0.95, 0.9), 'located');
  t.equal(confidenceVerdict(0.475, DEFAULT_MIN_CONFIDENCE), 'low-confidence', 'two equally likely places');
  t.equal(confidenceVerdict(0, 0.1), 'low-confidence');
});
