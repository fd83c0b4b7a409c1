import {
  entryId,
  entryText,
  entryTitle,
  type FeedEntry,
  type FeedHead,
  type FeedLinks,
} from './feed-entries.ts';

// The JSON Feed 1.1 of a saved view (https://jsonfeed.org/version/1.1): the same entries as its
// Atom feed, paged with `next_url`; each item carries the event as the read API shows it in
// `_chronomap` (JSON Feed's extension rule: a key starting with an underscore).

export function jsonFeed(head: FeedHead, links: FeedLinks, entries: readonly FeedEntry[]) {
  const view = `${head.origin}/v/${head.code}`;
  return {
    version: 'https://jsonfeed.org/version/1.1',
    title: head.title,
    ...(head.description ? { description: head.description } : {}),
    home_page_url: view,
    feed_url: links.self,
    ...(links.next ? { next_url: links.next } : {}),
    authors: [{ name: 'Chronomap' }],
    items: entries.map(({ event, storedAt, updatedAt }) => ({
      id: entryId(head.origin, event.id),
      url: view,
      title: entryTitle(event),
      content_text: entryText(event),
      date_published: storedAt,
      date_modified: updatedAt,
      tags: [event.dataset.catalog],
      _chronomap: { event },
    })),
  };
}
