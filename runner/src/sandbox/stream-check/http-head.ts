// Reads the head of the first HTTP/1.x request on a connection however the client split it
// (the bytes are buffered until the blank line), and rewrites it to end the connection after
// one exchange: a second request on the same connection (which could name another host) never
// reaches a server that honours `Connection: close`, and the stream check closes its side of
// the client stream once the server has answered (see proxy.ts).
import { hostOfAuthority } from './names.ts';

type HeadReading =
  | { state: 'more' }
  | { state: 'done'; hosts: string[]; head: Buffer; rest: Buffer }
  | { state: 'bad'; reason: string };

const MAX_HEAD_BYTES = 32 * 1024;

const REQUEST_LINE = /^[A-Z]{1,20} (\S+) HTTP\/1\.[01]$/;

/** Reads the request head at the start of a client's byte stream. */
export function readRequestHead(stream: Buffer): HeadReading {
  const end = stream.indexOf('\r\n\r\n');
  if (end < 0)
    return stream.length > MAX_HEAD_BYTES
      ? { state: 'bad', reason: 'request head too large' }
      : { state: 'more' };
  if (end > MAX_HEAD_BYTES) return { state: 'bad', reason: 'request head too large' };
  const lines = stream.subarray(0, end).toString('latin1').split('\r\n');
  const requestLine = REQUEST_LINE.exec(lines[0] ?? '');
  if (!requestLine) return { state: 'bad', reason: 'not an HTTP/1.x request line' };
  const hosts: string[] = [];
  const target = requestLine[1] ?? '';
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(target);
  if (absolute) hosts.push(hostOfAuthority((absolute[1] ?? '').replace(/^.*@/, '')));
  const kept = [lines[0] ?? ''];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0 || /^\s/.test(line)) return { state: 'bad', reason: 'folded or malformed header line' };
    const name = line.slice(0, colon).trim().toLowerCase();
    if (name === 'host') hosts.push(hostOfAuthority(line.slice(colon + 1)));
    if (name === 'connection' || name === 'keep-alive' || name === 'proxy-connection' || name === 'upgrade')
      continue;
    kept.push(line);
  }
  if (hosts.length === 0) return { state: 'bad', reason: 'no Host' };
  kept.push('Connection: close', '', '');
  return {
    state: 'done',
    hosts,
    head: Buffer.from(kept.join('\r\n'), 'latin1'),
    rest: stream.subarray(end + 4),
  };
}
