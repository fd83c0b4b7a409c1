// Bearer authentication with the shared SCRAPER_API_KEY, compared in constant time. Both sides
// are hashed first so that the comparison also takes the same time whatever the lengths.
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value).digest();

export function bearerMatches(header: string | undefined, apiKey: string): boolean {
  const expected = digest(apiKey);
  const match = /^Bearer (.+)$/.exec(header ?? '');
  const presented = digest(match?.[1] ?? '');
  // Evaluate the comparison even when the header is malformed: no early exit to time.
  const equal = timingSafeEqual(presented, expected);
  return equal && match !== null;
}
