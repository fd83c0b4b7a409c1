// One CSV field as every CSV the service writes from JavaScript has it (an account's data export,
// the read exports' header, an import's rows not placed): RFC 4180 quoting, and a text value that
// starts with =, +, -, @, tab or carriage return defused with an apostrophe, since a spreadsheet
// would run it as a formula (CSV injection; numbers, negative ones included, are written as they
// are). The read exports' rows are written by SQL (csvText in postgres/read/export.ts) by the same rule.

export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text =
    typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text) && typeof value === 'string') text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
