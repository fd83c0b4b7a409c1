// Hostile text into HTML: the one escape of the pages (src/adapters/http/html.ts) and of the mails
// (src/domain/email/messages.ts). Text and attribute values alike: the five characters that can end
// a text run or a quoted attribute become entities.

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}
