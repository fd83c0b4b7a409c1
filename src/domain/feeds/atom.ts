import {
  entryId,
  entryText,
  entryTitle,
  type FeedEntry,
  type FeedHead,
  type FeedLinks,
} from './feed-entries.ts';

// The Atom feed of a saved view (RFC 4287), paged as RFC 5005 §3 says (a `next` link to older
// entries, a `first` link to the newest). test/integration/feeds/view-feeds.test.ts validates it
// with `jing` against RFC 4287's RELAX NG schema (test/fixtures/feeds/atom.rnc).

const ATOM_NS = 'http://www.w3.org/2005/Atom';

// Characters XML 1.0 cannot carry at all (C0 controls but tab, newline and carriage return; lone
// surrogates; U+FFFE/U+FFFF): dropped, as no escape can write them.
const NOT_XML =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text for XML content and attribute values: escaped, with characters XML cannot hold left out. */
function xmlText(text: string): string {
  return text
    .replace(NOT_XML, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

const link = (rel: string, href: string, type?: string) =>
  `<link rel="${rel}" href="${xmlText(href)}"${type ? ` type="${type}"` : ''}/>`;

function atomEntry(origin: string, alternate: string, entry: FeedEntry): string {
  const { event } = entry;
  return [
    '<entry>',
    `<id>${xmlText(entryId(origin, event.id))}</id>`,
    `<title type="text">${xmlText(entryTitle(event))}</title>`,
    `<published>${entry.storedAt}</published>`,
    `<updated>${entry.updatedAt}</updated>`,
    link('alternate', alternate, 'text/html'),
    `<category term="${xmlText(event.dataset.catalog)}" label="${xmlText(event.dataset.title)}"/>`,
    `<content type="text">${xmlText(entryText(event))}</content>`,
    '</entry>',
  ].join('');
}

/** The Atom document of one page of a view's feed, newest-stored first. */
export function atomFeed(head: FeedHead, links: FeedLinks, entries: readonly FeedEntry[]): string {
  const view = `${head.origin}/v/${head.code}`;
  return [
    '<?xml version="1.0" encoding="utf-8"?>\n',
    `<feed xmlns="${ATOM_NS}">`,
    `<id>${xmlText(`${view}/feed.atom`)}</id>`,
    `<title type="text">${xmlText(head.title)}</title>`,
    head.description ? `<subtitle type="text">${xmlText(head.description)}</subtitle>` : '',
    `<updated>${head.updated}</updated>`,
    '<author><name>Chronomap</name></author>',
    '<generator>Chronomap</generator>',
    link('self', links.self, 'application/atom+xml'),
    link('first', links.first, 'application/atom+xml'),
    links.next ? link('next', links.next, 'application/atom+xml') : '',
    link('alternate', view, 'text/html'),
    ...entries.map((entry) => atomEntry(head.origin, view, entry)),
    '</feed>\n',
  ].join('');
}
