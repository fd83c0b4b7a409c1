// Reads the server name (SNI) of a TLS ClientHello however the client split it: across TCP
// segments (the bytes are buffered until enough have come) and across TLS records (the
// handshake fragments of consecutive records are joined until the handshake message is
// complete). Nothing is decrypted: a ClientHello is sent in the clear.

/** The verdict on the bytes seen so far. */
type HelloReading =
  { state: 'more' } | { state: 'done'; serverNames: string[] } | { state: 'bad'; reason: string };

/** A ClientHello larger than this (with post-quantum key shares they reach ~2 KB) is refused. */
const MAX_HELLO_BYTES = 64 * 1024;

const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const SERVER_NAME = 0x0000;

/** The handshake bytes carried by the complete records at the start of `stream`, and whether a record is still partial. */
function handshakeBytes(stream: Buffer): { bytes: Buffer; error?: string } {
  const parts: Buffer[] = [];
  let at = 0;
  while (at + 5 <= stream.length) {
    if (stream[at] !== HANDSHAKE) return { bytes: Buffer.alloc(0), error: 'not a TLS handshake record' };
    if (stream[at + 1] !== 0x03) return { bytes: Buffer.alloc(0), error: 'not a TLS record version' };
    const length = stream.readUInt16BE(at + 3);
    if (length === 0 || length > 16384 + 256)
      return { bytes: Buffer.alloc(0), error: 'bad TLS record length' };
    if (at + 5 + length > stream.length) break;
    parts.push(stream.subarray(at + 5, at + 5 + length));
    at += 5 + length;
  }
  return { bytes: Buffer.concat(parts) };
}

/** The SNI host names in a complete ClientHello body (after the 4-byte handshake header). */
function serverNamesOf(body: Buffer): string[] | string {
  let at = 2 + 32; // legacy_version, random
  if (at + 1 > body.length) return 'truncated ClientHello';
  at += 1 + (body[at] ?? 0); // session id
  if (at + 2 > body.length) return 'truncated ClientHello';
  at += 2 + body.readUInt16BE(at); // cipher suites
  if (at + 1 > body.length) return 'truncated ClientHello';
  at += 1 + (body[at] ?? 0); // compression methods
  if (at === body.length) return []; // no extensions at all
  if (at + 2 > body.length) return 'truncated ClientHello';
  const end = at + 2 + body.readUInt16BE(at);
  if (end > body.length) return 'truncated extensions';
  at += 2;
  const names: string[] = [];
  while (at + 4 <= end) {
    const type = body.readUInt16BE(at);
    const length = body.readUInt16BE(at + 2);
    const data = body.subarray(at + 4, at + 4 + length);
    if (data.length !== length) return 'truncated extension';
    if (type === SERVER_NAME) {
      let n = 2;
      while (n + 3 <= data.length) {
        const nameLength = data.readUInt16BE(n + 1);
        if (n + 3 + nameLength > data.length) return 'truncated server name';
        if (data[n] === 0) names.push(data.subarray(n + 3, n + 3 + nameLength).toString('latin1'));
        n += 3 + nameLength;
      }
    }
    at += 4 + length;
  }
  return names;
}

/** Reads the ClientHello at the start of a client's byte stream. */
export function readClientHello(stream: Buffer): HelloReading {
  if (stream.length > MAX_HELLO_BYTES) return { state: 'bad', reason: 'ClientHello too large' };
  const { bytes, error } = handshakeBytes(stream);
  if (error) return { state: 'bad', reason: error };
  if (bytes.length < 4) return { state: 'more' };
  if (bytes[0] !== CLIENT_HELLO)
    return { state: 'bad', reason: 'first handshake message is not a ClientHello' };
  const length = bytes.readUIntBE(1, 3);
  if (length > MAX_HELLO_BYTES) return { state: 'bad', reason: 'ClientHello too large' };
  if (bytes.length < 4 + length) return { state: 'more' };
  const names = serverNamesOf(bytes.subarray(4, 4 + length));
  return typeof names === 'string' ? { state: 'bad', reason: names } : { state: 'done', serverNames: names };
}
