// The body of a successful POST /run, streamed: the result's JSON with the CSV spliced in as
// base64 straight from the file, so neither the CSV nor its base64 (4/3 of it) nor the JSON
// around it is ever held whole in the runner's memory.
import type { FileHandle } from 'node:fs/promises';
import type { RunResult } from '../run-types.ts';

/** Base64 is made of 3-byte groups: chunks of this size encode without padding in between. */
const CHUNK = 3 * 256 * 1024;

export async function* runResponseBody(
  result: Omit<RunResult, 'output'>,
  csv: { rows: number; bytes: number; file: FileHandle },
): AsyncGenerator<string> {
  try {
    const head = JSON.stringify(result);
    yield `${head.slice(0, -1)},"output":{"rows":${csv.rows},"bytes":${csv.bytes},"content_base64":"`;
    let carry = Buffer.alloc(0);
    for await (const chunk of csv.file.createReadStream({
      start: 0,
      autoClose: false,
      highWaterMark: CHUNK,
    })) {
      const bytes = carry.length > 0 ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
      const whole = bytes.length - (bytes.length % 3);
      yield bytes.subarray(0, whole).toString('base64');
      carry = Buffer.from(bytes.subarray(whole));
    }
    yield `${carry.toString('base64')}"}}`;
  } finally {
    await csv.file.close();
  }
}
