// Checks every query of a DNS-over-TCP stream (RFC 7766: each message preceded by its 2-byte
// length, several messages per connection, any message split across segments): the question
// names are read from each complete message, so a name split across packets is still seen.
import { isBlockedName } from './names.ts';

/** The question names of one DNS message, or a reason it cannot be read. */
function questionNames(message: Buffer): string[] | string {
  if (message.length < 12) return 'short DNS message';
  const count = message.readUInt16BE(4);
  const names: string[] = [];
  let at = 12;
  for (let q = 0; q < count; q++) {
    const labels: string[] = [];
    for (;;) {
      const length = message[at];
      if (length === undefined) return 'truncated question';
      if (length === 0) break;
      if (length >= 0x40) return 'compressed or extended label in a question';
      if (at + 1 + length > message.length) return 'truncated label';
      labels.push(message.subarray(at + 1, at + 1 + length).toString('latin1'));
      at += 1 + length;
    }
    at += 1 + 4; // the root label, QTYPE and QCLASS
    if (at > message.length) return 'truncated question';
    names.push(labels.join('.'));
  }
  return names;
}

/**
 * Feeds a DNS-over-TCP client stream through: `push` returns the bytes of the complete
 * messages that may go on, or a reason to end the connection.
 */
export class DnsStreamCheck {
  private pending: Buffer = Buffer.alloc(0);
  private readonly domains: readonly string[];

  constructor(domains: readonly string[]) {
    this.domains = domains;
  }

  push(chunk: Buffer): { pass: Buffer } | { refuse: string } {
    this.pending = Buffer.concat([this.pending, chunk]);
    const pass: Buffer[] = [];
    while (this.pending.length >= 2) {
      const length = this.pending.readUInt16BE(0);
      if (this.pending.length < 2 + length) break;
      const names = questionNames(this.pending.subarray(2, 2 + length));
      if (typeof names === 'string') return { refuse: names };
      const blocked = names.find((name) => isBlockedName(name, this.domains));
      if (blocked !== undefined) return { refuse: `query for ${blocked}` };
      pass.push(this.pending.subarray(0, 2 + length));
      this.pending = this.pending.subarray(2 + length);
    }
    return { pass: Buffer.concat(pass) };
  }
}
