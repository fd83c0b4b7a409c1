// Ids that the database makes with gen_random_uuid() (sessions, e-mail addresses, background
// exports) arrive in URLs, forms and tokens: whatever is not a UUID names none of them, so it is
// answered as "not found" before any query (a uuid cast of other text would be a database error).

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `text` is a UUID in its canonical text form (any case). */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}
