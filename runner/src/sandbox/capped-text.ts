// Keeps the first `limit` bytes of a stream and counts the rest, so a scraper printing in a
// loop cannot exhaust the runner's memory. `push` says when the limit is passed, so the caller
// can stop carrying the stream at all (container.ts: the run ends with LOG_LIMIT).
export class CappedText {
  private readonly limit: number;
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Keeps what fits; true once more than `limit` bytes have come in all. */
  push(chunk: Buffer): boolean {
    const room = this.limit - this.kept;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.chunks.push(part);
      this.kept += part.length;
    }
    this.dropped += Math.max(0, chunk.length - Math.max(0, room));
    return this.dropped > 0;
  }

  text(): string {
    const body = Buffer.concat(this.chunks).toString('utf8');
    return this.dropped > 0 ? `${body}\n[chronomap-runner: ${this.dropped} more bytes not kept]\n` : body;
  }
}
