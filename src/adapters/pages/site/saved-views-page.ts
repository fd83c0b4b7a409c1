import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import {
  changeView,
  deleteView,
  listMyViews,
  type SavedViewDeps,
} from '../../../application/site/saved-views.ts';
import type { SavedView } from '../../../domain/site/saved-views.ts';
import { publicOrigin } from '../../http/public-url.ts';
import { accountPages, headRow, hidden } from '../account-pages.ts';
import { csrfInput } from '../csrf.ts';
import { type Html, html } from '../html.ts';
import { copyButton, pageScript } from '../page-scripts.ts';
import { flashFrom } from '../replies.ts';

// /account/views: the saved views of the Explore page (issue 38 §1–2, §6). Each with its short
// link, public or private, the sites allowed to frame its embed (one origin per line) and the
// snippet to paste there. Views are saved from the Explore page ("Save this view"); this page
// changes and deletes them through the same use cases as /api/views.

const HOME = '/account/views';

type SavedViewsPageDeps = { views: SavedViewDeps; csrfSecret: string };

/** The view's code from the form's path (`/account/views/:code/...`). */
const codeOf = (reply: FastifyReply) => (reply.request.params as { code: string }).code;

function viewCard(token: string, origin: string, view: SavedView): Html {
  const action = (path: string, label: string, kind = 'secondary') =>
    html`<form method="post" action="${HOME}/${view.code}/${path}" class="inline">
      ${csrfInput(token)}<button type="submit" class="small ${kind}">${label}</button>
    </form>`;
  const embedUrl = `${origin}/embed/${view.code}`;
  const snippet = `<iframe src="${embedUrl}" title="${view.title.replace(/"/g, '&quot;')}" width="800" height="600" style="border:0" loading="lazy"></iframe>`;
  return html`<section class="card" id="view-${view.code}" data-view="${view.code}">
    <div class="actions" style="justify-content:space-between; flex-wrap:wrap">
      <h2 style="margin:0">
        <a href="/v/${view.code}">${view.title}</a>
        <span class="badge ${view.isPublic ? 'public' : 'private'}"
          >${view.isPublic ? 'public' : 'private'}</span
        >
      </h2>
      <div class="actions">
        ${view.isPublic ? action('private', 'Make private') : action('public', 'Make public')}
        ${action('delete', 'Delete', 'danger')}
      </div>
    </div>
    ${view.description ? html`<p>${view.description}</p>` : ''}
    <p>
      <label for="link-${view.code}">Short link</label>
      <input id="link-${view.code}" type="text" readonly value="${origin}/v/${view.code}" size="40" />
      ${copyButton(`link-${view.code}`)}
    </p>
    <form method="post" action="${HOME}/${view.code}/embed">
      ${csrfInput(token)}
      <label for="origins-${view.code}"
        >Sites that may embed it (one origin per line, like https://news.example.org)</label
      >
      <textarea id="origins-${view.code}" name="origins" rows="3">${view.embedOrigins.join('\n')}</textarea>
      <button type="submit" class="small">Save the allowed sites</button>
    </form>
    ${
      view.embedOrigins.length
        ? html`<label for="snippet-${view.code}">Paste into a page of an allowed site</label>
            <textarea id="snippet-${view.code}" readonly rows="2">${snippet}</textarea>
            ${copyButton(`snippet-${view.code}`)}`
        : html`<p class="muted">No site may frame the embed until one is allowed above.</p>`
    }
  </section>`;
}

function listView(token: string, origin: string, views: SavedView[]): Html {
  return html`<h1>Saved views</h1>
    <p class="muted">
      Views of the Explore page: open one to save it with <strong>Save this view</strong> beside the filters.
      A public view opens for anyone with its link; the events it shows are still only those each visitor may
      see.
    </p>
    ${
      views.length
        ? html`<table>
              ${headRow('View', 'Visibility', 'Allowed sites', 'Saved')}
              <tbody>
                ${views.map(
                  (view) =>
                    html`<tr>
                      <td><a href="#view-${view.code}">${view.title}</a></td>
                      <td>${view.isPublic ? 'public' : 'private'}</td>
                      <td>${view.embedOrigins.length}</td>
                      <td>${view.createdAt.slice(0, 16).replace('T', ' ')} UTC</td>
                    </tr>`,
                )}
              </tbody>
            </table>
            ${views.map((view) => viewCard(token, origin, view))} ${pageScript('copy-buttons.js')}`
        : html`<div class="card">
            <p>No saved views yet. <a href="/">Open the Explore page</a>.</p>
          </div>`
    }`;
}

export const savedViewsPage: FastifyPluginAsync<SavedViewsPageDeps> = async (app, deps) => {
  const pages = accountPages(app, deps.csrfSecret, HOME);

  app.get(HOME, hidden, async (request, reply) => {
    const user = pages.user(request, reply, HOME);
    if (!user) return reply;
    const token = pages.csrf.token(request, reply);
    const views = await listMyViews(deps.views, user);
    return pages.render(reply, 200, 'Saved views', listView(token, publicOrigin(request), views), {
      user,
      token,
      flash: flashFrom(request),
      scripts: views.length > 0,
    });
  });

  pages.action(`${HOME}/:code/public`, HOME, async (user, _id, _form, reply) => {
    await changeView(deps.views, user, codeOf(reply), { isPublic: true });
    return 'The view is public: anyone with its link may open it.';
  });
  pages.action(`${HOME}/:code/private`, HOME, async (user, _id, _form, reply) => {
    await changeView(deps.views, user, codeOf(reply), { isPublic: false });
    return 'The view is private: only you may open it.';
  });
  pages.action(`${HOME}/:code/embed`, HOME, async (user, _id, form, reply) => {
    const origins = (form.origins ?? '')
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '');
    await changeView(deps.views, user, codeOf(reply), { embedOrigins: origins });
    return origins.length ? 'The allowed sites were saved.' : 'No site may frame the embed now.';
  });
  pages.action(`${HOME}/:code/delete`, HOME, async (user, _id, _form, reply) => {
    await deleteView(deps.views, user, codeOf(reply));
    return 'The view was deleted.';
  });
};
