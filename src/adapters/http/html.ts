import { escapeHtml } from '../../domain/html-escape.ts';

// A tiny HTML template tag: every interpolated value is escaped unless it is already Html (built by
// this tag or marked with `trusted`). Arrays are joined, null/undefined/false render nothing.

export class Html {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  toString(): string {
    return this.text;
  }
}

export type Renderable = Html | string | number | boolean | null | undefined | Renderable[];

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** Markup written in our own code (never user input). */
export function trusted(text: string): Html {
  return new Html(text);
}

/**
 * Data for a page's script as `<script type="application/json" id=…>`: JSON there is data, not
 * code (no Content-Security-Policy allowance needed), and "<" is escaped so no value can close the tag.
 */
export function jsonData(id: string, value: unknown): Html {
  const json = JSON.stringify(value).replace(/</g, '\\u003c');
  return html`<script id="${id}" type="application/json">
    ${trusted(json)}
  </script>`;
}
