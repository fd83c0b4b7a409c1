// The CPU cost of reading an import's rows (not a test): the CSV parser alone over a generated file,
// then the parser with the row checks every stage now makes (rowShapeProblem: malformed, ragged and
// oversized rows), in alternating rounds in one process, so the second figure has its baseline
// beside it. No database: it answers what the row errors cost per pass over the file.
// Run: node bench/ingest/rows-bench.ts [--rows N] [--rounds N]
import { parseArgs } from 'node:util';
import { CsvParser } from '@chronomap/csv';
import { rowShapeProblem } from '../../src/domain/ingest/rows.ts';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '3' } },
});
const ROWS = Number(values.rows);
const ROUNDS = Number(values.rounds);
const CHUNK = 256 * 1024;
const say = (line: string) => process.stdout.write(`${line}\n`);

const header = ['id', 'time', 'latitude', 'longitude', 'title', 'magnitude', 'place', 'notes'];
const lines = [header.join(',')];
for (let i = 0; i < ROWS; i++) {
  lines.push(
    `${i},2024-01-${String((i % 28) + 1).padStart(2, '0')}T12:00:00Z,${(i % 180) - 90}.5,${(i % 360) - 180}.25,` +
      `"Event ${i}, quoted",${(i % 90) / 10},Somewhere ${i % 1000},plain text ${i}`,
  );
}
const text = `${lines.join('\n')}\n`;

function pass(check: boolean): { ms: number; rows: number; problems: number } {
  const started = performance.now();
  const parser = new CsvParser(',');
  let rows = 0;
  let problems = 0;
  let head: string[] | null = null;
  const visit = (read: ReturnType<CsvParser['push']>) => {
    for (const row of read) {
      if (!head) {
        head = row as string[];
        continue;
      }
      rows += 1;
      if (check && rowShapeProblem(head, row, { shortRowsAllowed: false })) problems += 1;
    }
  };
  for (let i = 0; i < text.length; i += CHUNK) visit(parser.push(text.slice(i, i + CHUNK)));
  visit(parser.end());
  return { ms: performance.now() - started, rows, problems };
}

say(`${ROWS.toLocaleString('en')} rows, ${(text.length / 1024 / 1024).toFixed(1)} MB, ${ROUNDS} rounds`);
const totals = { parse: 0, checked: 0 };
for (let round = 1; round <= ROUNDS; round++) {
  const parse = pass(false);
  const checked = pass(true);
  if (checked.problems !== 0 || checked.rows !== ROWS)
    throw new Error('the generated rows should all be fine');
  totals.parse += parse.ms;
  totals.checked += checked.ms;
  const rate = (ms: number) => Math.round(ROWS / (ms / 1000)).toLocaleString('en');
  say(
    `round ${round}: parser alone ${parse.ms.toFixed(0)} ms (${rate(parse.ms)} rows/s); ` +
      `with row checks ${checked.ms.toFixed(0)} ms (${rate(checked.ms)} rows/s)`,
  );
}
say(`row checks add ${(((totals.checked - totals.parse) / totals.parse) * 100).toFixed(1)} % to a pass`);
