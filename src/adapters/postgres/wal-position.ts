import type { Lsn } from '../../domain/read/replica-choice.ts';

// PostgreSQL's text form of a WAL position (`16/B374D848`: two hexadecimal halves of a 64-bit byte
// offset), as pg_current_wal_insert_lsn() writes it and as the read-your-writes cookie carries it. The
// domain compares positions as numbers; reading and writing PostgreSQL's text is the adapter's.

export function parseLsn(text: string): Lsn | null {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text.trim());
  if (!match) return null;
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

export function formatLsn(lsn: Lsn): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}
