import t from 'tap';

// The timeline's tick labels: a view of a few days has buckets of hours, whose ticks named only the
// date all read the same ("2026-01-01" eight times); they name the day and the time instead.

const { bucketLabel } = (await import(new URL('../../../web/explore/format.js', import.meta.url).href)) as {
  bucketLabel: (iso: string, bucketMs: number) => string;
};

const HOUR = 3_600_000;

t.test('buckets of a day or more are labelled by their date', async (t) => {
  t.equal(bucketLabel('2026-01-01T00:00:00.000Z', 24 * HOUR), '2026-01-01');
  t.equal(bucketLabel('1999-07-01T00:00:00.000Z', 31 * 24 * HOUR), '1999-07-01');
});

t.test('shorter buckets by their day and time, so the ticks of one day differ', async (t) => {
  const labels = [0, 6, 12, 18].map((hour) =>
    bucketLabel(`2026-01-01T${String(hour).padStart(2, '0')}:00:00.000Z`, 6 * HOUR),
  );
  t.same(labels, ['01-01 00:00', '01-01 06:00', '01-01 12:00', '01-01 18:00']);
  t.equal(new Set(labels).size, labels.length);
});
