import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { permanent } from '../../domain/ingest/failures.ts';

// Workbook XML goes through saxes, a streaming, well-formedness-checking XML parser: no regex over
// markup, no whole sheet in memory, and no entity expansion beyond XML's five and character
// references (saxes does not read DTDs), so an entity bomb is a parse error, not a memory spike.

export type XmlOptions = {
  /**
   * Hand element names to the handlers without their prefix (`x:row` as `row`): Office Open XML
   * writers may bind the SpreadsheetML namespace to any prefix. ODS keeps its conventional ones.
   */
  localNames?: boolean;
};

const localName = (name: string) => name.slice(name.indexOf(':') + 1);

type XmlHandlers = {
  open?(tag: SaxesTagPlain): void;
  close?(name: string): void;
  text?(text: string): void;
};

/**
 * Feeds the chunks to the parser; after each chunk, yields what the handlers queued with `emit`
 * (so a consumer that stops reading stops the parse). `done()` ends the parse early.
 */
export async function* parseXml<T>(
  chunks: AsyncIterable<string>,
  what: string,
  handlers: (emit: (item: T) => void, done: () => void) => XmlHandlers,
  options: XmlOptions = {},
): AsyncGenerator<T> {
  const queue: T[] = [];
  let finished = false;
  const parser = new SaxesParser({ xmlns: false, position: false });
  const on = handlers(
    (item) => queue.push(item),
    () => {
      finished = true;
    },
  );
  parser.on('error', (error) => {
    throw permanent('INVALID_FORMAT', `the workbook is damaged (${what}: ${error.message})`);
  });
  if (on.open) {
    const open = on.open;
    parser.on('opentag', options.localNames ? (tag) => open({ ...tag, name: localName(tag.name) }) : open);
  }
  if (on.close) {
    const close = on.close;
    const name = options.localNames ? localName : (tagName: string) => tagName;
    parser.on('closetag', (tag) => close(name(tag.name)));
  }
  if (on.text) {
    parser.on('text', on.text);
    parser.on('cdata', on.text);
  }
  for await (const chunk of chunks) {
    parser.write(chunk);
    yield* queue.splice(0);
    if (finished) return;
  }
  parser.close();
  yield* queue.splice(0);
}

/** Collects everything a parse emits (for the small parts: directory, relations, styles, strings). */
export async function collectXml<T>(
  chunks: AsyncIterable<string>,
  what: string,
  handlers: (emit: (item: T) => void, done: () => void) => XmlHandlers,
  options: XmlOptions = {},
): Promise<T[]> {
  const all: T[] = [];
  for await (const item of parseXml(chunks, what, handlers, options)) all.push(item);
  return all;
}
