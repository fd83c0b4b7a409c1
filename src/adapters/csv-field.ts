// One CSV field as every CSV the service writes from JavaScript has it (the read exports' header,
// an import's rows not placed): RFC 4180 quoting, and a leading =, +, -, @, tab or carriage return
// defused with an apostrophe, since a spreadsheet would run the cell as a formula (CSV injection).
// The read exports' rows are written by SQL (csvText in postgres/read/export.ts) by the same rule.

export function csvField(text: string): string {
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
