import { type Html, html, type Renderable, trusted } from './html.ts';

// The dashboard's frame: one stylesheet inline (no extra request, works offline), a navigation
// bar, and flash messages carried in the query string after a redirect.

const STYLE = trusted(`
:root { --ink:#1f2933; --muted:#616e7c; --line:#d9e2ec; --bg:#f5f7fa; --card:#fff; --accent:#2f6fde; --accent-ink:#fff;
  --ok-bg:#e3f9e5; --ok:#0e7a2e; --err-bg:#ffe3e3; --err:#a61b1b; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color:var(--ink); background:var(--bg); }
a { color:var(--accent); }
header.top { display:flex; flex-wrap:wrap; align-items:center; gap:.25rem 2rem; padding:.5rem 1.5rem; min-height:56px; background:#102a43; color:#fff; }
header.top .brand { font-weight:700; letter-spacing:.02em; color:#fff; text-decoration:none; }
header.top nav { display:flex; flex-wrap:wrap; gap:.25rem; flex:1; }
header.top nav a { color:#bcccdc; text-decoration:none; white-space:nowrap; padding:.4rem .75rem; border-radius:6px; }
header.top nav a.active, header.top nav a:hover { background:#243b53; color:#fff; }
header.top .who { color:#bcccdc; font-size:.9em; display:flex; gap:.75rem; align-items:center; }
main { max-width:1100px; margin:2rem auto; padding:0 1.5rem; }
h1 { font-size:1.6rem; margin:0 0 1rem; }
h2 { font-size:1.15rem; margin:2rem 0 .75rem; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:1.25rem 1.5rem; margin-bottom:1.25rem; }
.stats { display:grid; grid-template-columns:repeat(auto-fit, minmax(180px, 1fr)); gap:1rem; }
.stat { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:1rem 1.25rem; }
.stat b { display:block; font-size:1.8rem; }
a.stat { text-decoration:none; color:inherit; }
a.stat:hover { border-color:var(--accent); }
.stat span { color:var(--muted); }
table { width:100%; border-collapse:collapse; background:var(--card); border:1px solid var(--line); border-radius:10px; overflow:hidden; }
th, td { text-align:left; padding:.6rem .8rem; border-bottom:1px solid var(--line); vertical-align:middle; }
th { background:#f0f4f8; font-weight:600; font-size:.85em; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
tr:last-child td { border-bottom:0; }
.muted { color:var(--muted); }
.badge { display:inline-block; padding:.1rem .55rem; border-radius:999px; font-size:.8em; font-weight:600; }
.badge.public { background:var(--ok-bg); color:var(--ok); }
.badge.private { background:#fff3c4; color:#8d6100; }
.badge.on { background:var(--ok-bg); color:var(--ok); }
.badge.off { background:#e4e7eb; color:#52606d; }
.flags div { padding:.3rem 0; }
form.inline { display:flex; gap:.5rem; align-items:center; margin:0; flex-wrap:wrap; }
form.stack { display:grid; gap:.9rem; max-width:520px; }
label { display:grid; gap:.3rem; font-weight:600; font-size:.92em; }
label.check { display:flex; gap:.6rem; align-items:flex-start; font-weight:400; }
label.check input { margin-top:.3rem; }
input[type=text], input[type=email], input[type=password], input[type=url], textarea, select {
  font:inherit; font-weight:400; padding:.5rem .65rem; border:1px solid #bcccdc; border-radius:6px; background:#fff; width:100%; }
select.small { width:auto; padding:.3rem .5rem; }
textarea { min-height:5rem; }
button { font:inherit; font-weight:600; padding:.5rem 1rem; border-radius:6px; border:1px solid var(--accent); background:var(--accent); color:var(--accent-ink); cursor:pointer; }
button.secondary { background:#fff; color:var(--accent); }
button.danger { background:#fff; color:var(--err); border-color:var(--err); }
button.small { padding:.3rem .7rem; font-size:.9em; }
.flash { padding:.75rem 1rem; border-radius:8px; margin-bottom:1.25rem; }
.flash.ok { background:var(--ok-bg); color:var(--ok); }
.flash.error { background:var(--err-bg); color:var(--err); }
.usage { font-size:.85em; color:var(--muted); }
.usage b { color:var(--ink); font-weight:600; }
.login { max-width:400px; margin:12vh auto; }
.login h1 { text-align:center; }
.row { display:flex; gap:1rem; flex-wrap:wrap; align-items:flex-start; }
.row > * { flex:1; min-width:200px; }
.actions { display:flex; gap:.75rem; align-items:center; }
.badge.synced, .badge.success, .badge.completed { background:var(--ok-bg); color:var(--ok); }
.badge.pending, .badge.queued, .badge.syncing, .badge.running, .badge.processing { background:#dceefb; color:#0b4f8a; }
.badge.failed, .badge.timeout, .badge.partial { background:var(--err-bg); color:var(--err); }
.badge.needs-review, .badge.streak { background:#fff3c4; color:#8d6100; }
.badge.streak-alerting { background:var(--err-bg); color:var(--err); }
details { margin:.25rem 0; }
.nowrap { white-space:nowrap; }
table table { border-radius:6px; margin-top:.5rem; }
details > summary { cursor:pointer; color:var(--accent); font-weight:600; }
pre.log { font:13px/1.45 ui-monospace, "DejaVu Sans Mono", Menlo, monospace; background:#102a43; color:#e6edf3;
  padding:.75rem 1rem; border-radius:8px; max-height:320px; overflow:auto; white-space:pre; margin:.4rem 0; }
pre.log.err { background:#3b0d0d; color:#ffd8d8; }
pre.error { white-space:pre-wrap; color:var(--err); background:var(--err-bg); padding:.5rem .75rem; border-radius:6px; }
`);

export type Flash = { notice?: string | undefined; error?: string | undefined };

function flashes(flash: Flash): Html {
  return html`${flash.notice ? html`<div class="flash ok" role="status">${flash.notice}</div>` : ''}${
    flash.error ? html`<div class="flash error" role="alert">${flash.error}</div>` : ''
  }`;
}

const NAV: [string, string][] = [
  ['/dashboard', 'Overview'],
  ['/dashboard/catalogs', 'Catalogs'],
  ['/dashboard/ingest', 'Imports'],
  ['/dashboard/users', 'Users'],
  ['/dashboard/settings', 'Settings'],
  ['/account/scrapers', 'Scrapers'],
];

export function page(options: {
  title: string;
  active?: string;
  user?: { email: string } | null;
  csrf?: string;
  flash?: Flash;
  body: Renderable;
  /** Links in the bar (default: the dashboard's) and where "Log out" posts. */
  nav?: (readonly [string, string])[];
  logoutAction?: string;
  /** Where the brand link goes (site-navigation.ts#homeOf; the dashboard's pages: the dashboard). */
  brand?: string;
}): string {
  const nav = options.user
    ? html`<nav aria-label="Dashboard">
          ${(options.nav ?? NAV).map(
            ([href, label]) =>
              html`<a href="${href}" class="${options.active === href ? 'active' : ''}">${label}</a>`,
          )}
        </nav>
        <div class="who">
          <span>${options.user.email}</span>
          <form method="post" action="${options.logoutAction ?? '/dashboard/logout'}" class="inline">
            <input type="hidden" name="_csrf" value="${options.csrf ?? ''}" />
            <button type="submit" class="secondary small">Log out</button>
          </form>
        </div>`
    : '';
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${options.title} · Chronomap dashboard</title>
        <style>
          ${STYLE}
        </style>
      </head>
      <body>
        <header class="top">
          <a class="brand" href="${options.brand ?? '/dashboard'}">Chronomap</a>${nav}
        </header>
        <main>${flashes(options.flash ?? {})} ${options.body}</main>
      </body>
    </html> `.text;
}

/** A page that only says something: a heading, a sentence and perhaps a link (every area uses it). */
export function messageView(title: string, message: string, link?: [string, string]): Html {
  return html`<div class="card">
    <h1>${title}</h1>
    <p>${message}</p>
    ${link ? html`<p><a href="${link[0]}">${link[1]}</a></p>` : ''}
  </div>`;
}
