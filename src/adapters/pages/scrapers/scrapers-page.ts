import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { findDocument, findDocuments } from '../../../application/collections/collection-documents.ts';
import type { LoginDeps } from '../../../application/accounts/log-in.ts';
import { requestRepoSync } from '../../../application/scrapers/request-repo-sync.ts';
import {
  cancelRunDocument,
  createRepoDocument,
  deleteRepoDocument,
  listScraperDocuments,
  readScraperDocument,
  type ScraperCollectionDeps,
  targetDatasetChoices,
  updateRepoDocument,
  updateScraperDocument,
} from '../../../application/scrapers/scraper-collections.ts';
import { triggerScraperRun } from '../../../application/scrapers/trigger-scraper-run.ts';
import { hasScraperAccess } from '../../../domain/access.ts';
import { RateLimitedError } from '../../../domain/accounts/rate-limits.ts';
import { DomainError, ValidationError } from '../../../domain/errors.ts';
import { parseReviewDuplicates } from '../../../domain/ingest/review.ts';
import type { Doc } from '../../../ports/collections/collection-repository.ts';
import { webhookUrl } from '../../http/public-url.ts';
import { ACCOUNT_LOGIN, accountPages, formText, hidden, recordId, type User } from '../account-pages.ts';
import { CsrfError } from '../csrf.ts';
import type { Html } from '../html.ts';
import { messageView } from '../layout.ts';
import { registerLoginPages } from '../login-pages.ts';
import type { Flash } from '../layout.ts';
import { flashFrom } from '../replies.ts';
import {
  acceptFileForms,
  backTo,
  fileContent,
  filePath,
  newRepoInput,
  optionalId,
  type PostedForm,
  postedForm,
  ticked,
} from './scraper-forms.ts';
import { accountScrapersView, HOME } from './scraper-list-view.ts';
import { newRepoView, repoView } from './scraper-repo-view.ts';
import { runView, scraperView } from './scraper-view.ts';

// /account/scrapers (spec: Management page) and its pages: the list of repos, scrapers and runs; a
// new repo from files or git; a repo with its manifest's problems and its files; a scraper with its
// settings, env vars and webhook; a run with its output. Admins see every repo. Like the dashboard
// it is server-rendered and works without JavaScript (scraper-watch.js only reloads a page whose
// run or sync is still going on); every action is a form post with a CSRF token answered by a
// redirect, and calls the same use case as the API route that does the same (scraper-collections.ts,
// trigger-scraper-run.ts, request-repo-sync.ts), so the access rules and limits are the API's.

type AccountScraperDeps = ScraperCollectionDeps & { login: LoginDeps; csrfSecret: string };

const RUNS_SHOWN = 10;

/** A post/redirect/get answer to a page whose address may hold a query and a fragment of its own. */
function redirectTo(reply: FastifyReply, to: string, flash: Flash): FastifyReply {
  const url = new URL(to, 'http://page.invalid');
  if (flash.notice) url.searchParams.set('notice', flash.notice);
  if (flash.error) url.searchParams.set('error', flash.error);
  return reply.redirect(`${url.pathname}${url.search}${url.hash}`, 303);
}
const all = { limit: 1000 };

export const accountScraperRoutes: FastifyPluginAsync<AccountScraperDeps> = async (app, deps) => {
  // The /account frame every account page shares (navigation, login redirect, CSRF, error pages).
  const pages = accountPages(app, deps.csrfSecret, HOME);
  const { csrf } = pages;
  await acceptFileForms(app);

  /** The logged-in user with scraper access, or a redirect to the login (or a 403 page). */
  const scraperUser = (request: FastifyRequest, reply: FastifyReply, next = HOME): User | null => {
    // After the login, back to the page asked for (a form post: to the list).
    const viewer = pages.user(request, reply, next);
    if (!viewer) return null;
    if (!hasScraperAccess(viewer)) {
      void pages.render(
        reply,
        403,
        'Scrapers',
        messageView(
          'Scrapers need trust level 3',
          'Scrapers are open to Trusted users (trust level 3) and above. Ask an admin to raise your trust level.',
        ),
        { user: viewer, token: csrf.token(request, reply) },
      );
      return null;
    }
    return viewer;
  };

  const show = (request: FastifyRequest, reply: FastifyReply, user: User, title: string, body: Html) =>
    pages.render(reply, 200, title, body, {
      user,
      token: csrf.token(request, reply),
      flash: flashFrom(request),
      scripts: true,
    });

  const page = (
    path: string,
    build: (user: User, id: number, token: string, request: FastifyRequest) => Promise<[string, Html]>,
  ) =>
    app.get(path, hidden, async (request, reply) => {
      const user = scraperUser(request, reply, request.url.split('?')[0]);
      if (!user) return reply;
      const id = recordId((request.params as { id?: string }).id);
      const [title, body] = await build(user, id, csrf.token(request, reply), request);
      return show(request, reply, user, title, body);
    });

  /**
   * A form post by a user with scraper access: the handler's notice flashed on the page it names (or
   * on `back`), a refused action's message flashed on `back`; someone else's record is the 404 page.
   */
  const action = (
    path: string,
    back: (id: number, form: PostedForm) => string,
    handler: (
      user: User,
      id: number,
      posted: PostedForm,
      reply: FastifyReply,
    ) => Promise<{ notice: string; to?: string }>,
  ) =>
    app.post(path, hidden, async (request, reply) => {
      const user = scraperUser(request, reply);
      if (!user) return reply;
      const posted = await postedForm(request);
      if (!csrf.verify(request, posted.form._csrf)) throw new CsrfError();
      const id = recordId((request.params as { id?: string }).id);
      try {
        if (posted.problem) throw posted.problem;
        const { notice, to } = await handler(user, id, posted, reply);
        // A handler that answered with a page of its own (a webhook URL shown once) is done.
        if (reply.sent) return reply;
        return redirectTo(reply, to ?? back(id, posted), { notice });
      } catch (error) {
        if (
          error instanceof DomainError &&
          error.kind !== 'not_found' &&
          !(error instanceof RateLimitedError)
        )
          return redirectTo(reply, back(id, posted), { error: error.message });
        throw error;
      }
    });

  registerLoginPages(app, {
    login: deps.login,
    csrf,
    paths: { login: ACCOUNT_LOGIN, logout: '/account/logout', home: HOME },
    heading: 'Log in',
    registerPath: '/account/register',
    render: (reply, status, body, flash) => pages.render(reply, status, 'Log in', body, { flash }),
  });

  app.get(HOME, hidden, async (request, reply) => {
    const user = scraperUser(request, reply);
    if (!user) return reply;
    const repos = await listScraperDocuments(deps, 'scraper-repos', user, { ...all, sort: 'name' });
    const scrapers = await listScraperDocuments(deps, 'scrapers', user, { ...all, sort: 'slug' });
    const runList = await listScraperDocuments(deps, 'scraper-runs', user, { ...all, sort: '-id' });
    const runs = new Map<number, { shown: Doc[]; total: number }>();
    for (const run of runList.docs) {
      const entry = runs.get(run.scraper as number) ?? { shown: [], total: 0 };
      entry.total += 1;
      // Lists leave the logs out: the runs shown are read one by one, with their output.
      if (entry.shown.length < RUNS_SHOWN)
        entry.shown.push(await readScraperDocument(deps, 'scraper-runs', user, run.id));
      runs.set(run.scraper as number, entry);
    }
    const owners = new Map<number, string>();
    if (user.role === 'admin') {
      const users = await findDocuments(deps, 'users', user, all);
      for (const doc of users.docs) owners.set(doc.id, String(doc.email));
    }
    const token = csrf.token(request, reply);
    const body = accountScrapersView(token, user, repos.docs, scrapers.docs, runs, owners);
    return show(request, reply, user, 'Scrapers', body);
  });

  page(`${HOME}/new`, async (_user, _id, token) => ['New scraper repo', newRepoView(token)]);

  action(
    `${HOME}/repos`,
    () => `${HOME}/new`,
    async (user, _id, posted) => {
      const doc = await createRepoDocument(deps, user, newRepoInput(posted));
      return {
        notice: `Created repo ${String(doc.name)}; reading its scrapers.yml.`,
        to: `${HOME}/repos/${doc.id}`,
      };
    },
  );

  const repoPage = (id: number) => `${HOME}/repos/${id}`;
  const scrapersOf = async (user: User, repoId: number) =>
    (
      await listScraperDocuments(deps, 'scrapers', user, {
        ...all,
        sort: 'slug',
        'where[repo][equals]': String(repoId),
      })
    ).docs;

  page(`${HOME}/repos/:id`, async (user, id, token, request) => {
    const repo = await readScraperDocument(deps, 'scraper-repos', user, id);
    const file = (request.query as Record<string, unknown>).file;
    const open = typeof file === 'string' ? file : null;
    return [String(repo.name), repoView(token, repo, await scrapersOf(user, id), open)];
  });

  action(`${HOME}/repos/:id/edit`, repoPage, async (user, id, { form }) => {
    const text = (name: string, max: number) =>
      form[name] === undefined ? {} : { [name]: formText(form, name, max) };
    const input = {
      ...text('name', 255),
      ...text('slug', 128),
      ...text('gitUrl', 2048),
      ...text('gitBranch', 200),
    };
    const { syncQueued } = await updateRepoDocument(deps, user, id, input);
    return { notice: syncQueued ? 'Saved; reading scrapers.yml again.' : 'Saved.' };
  });

  /** The repo's code map with `change` applied, saved through the API's update (which queues the sync). */
  const changeCode = async (
    user: User,
    id: number,
    change: (code: Record<string, string>) => Record<string, string>,
  ) => {
    const repo = await readScraperDocument(deps, 'scraper-repos', user, id);
    if (repo.sourceType !== 'upload')
      throw new ValidationError('the files of a git repo are changed by a push to its branch', {
        field: 'code',
      });
    const { syncQueued } = await updateRepoDocument(deps, user, id, {
      code: change({ ...((repo.code ?? {}) as Record<string, string>) }),
    });
    return syncQueued ? ' Reading scrapers.yml again.' : '';
  };

  action(
    `${HOME}/repos/:id/files`,
    (id, { form }) =>
      `${repoPage(id)}${form.original ? `?file=${encodeURIComponent(form.original)}` : ''}#files`,
    async (user, id, { form }) => {
      const path = filePath(form);
      const original = form.original ? filePath(form, 'original') : null;
      const sync = await changeCode(user, id, (code) => {
        if (original !== null && original !== path) delete code[original];
        code[path] = fileContent(form);
        return code;
      });
      return {
        notice: `Saved ${path}.${sync}`,
        to: `${repoPage(id)}?file=${encodeURIComponent(path)}#editor`,
      };
    },
  );

  action(`${HOME}/repos/:id/files/delete`, repoPage, async (user, id, { form }) => {
    const path = filePath(form);
    const sync = await changeCode(user, id, (code) => {
      delete code[path];
      return code;
    });
    return { notice: `Deleted ${path}.${sync}` };
  });

  action(`${HOME}/repos/:id/upload`, repoPage, async (user, id, { files }) => {
    const names = Object.keys(files);
    if (names.length === 0) throw new ValidationError('choose the files to upload', { field: 'code' });
    const sync = await changeCode(user, id, (code) => ({ ...code, ...files }));
    return { notice: `Uploaded ${names.join(', ')}.${sync}` };
  });

  action(
    `${HOME}/repos/:id/sync`,
    (_id, { form }) => backTo(form, HOME),
    async (user, id) => {
      await readScraperDocument(deps, 'scraper-repos', user, id);
      await requestRepoSync(deps.scrapers, user, id);
      return { notice: 'Sync queued.' };
    },
  );

  action(
    `${HOME}/repos/:id/delete`,
    () => HOME,
    async (user, id) => {
      const doc = await deleteRepoDocument(deps, user, id);
      return { notice: `Deleted repo ${String(doc.name)}.` };
    },
  );

  const scraperPage = (id: number) => `${HOME}/scrapers/${id}`;
  const datasetSlug = async (user: User, id: unknown): Promise<string | null> => {
    if (typeof id !== 'number') return null;
    // A target dataset the caller can no longer read has no links (its page would be a 404).
    const dataset = await findDocument(deps, 'datasets', user, id).catch(() => null);
    return dataset ? String(dataset.slug) : null;
  };

  const scraperBody = async (user: User, id: number, token: string, webhook: string | null) => {
    const scraper = await readScraperDocument(deps, 'scrapers', user, id);
    const repo = await readScraperDocument(deps, 'scraper-repos', user, scraper.repo as number);
    const runs = await listScraperDocuments(deps, 'scraper-runs', user, {
      limit: RUNS_SHOWN,
      sort: '-id',
      'where[scraper][equals]': String(id),
    });
    return scraperView(token, scraper, repo, {
      datasets: await targetDatasetChoices(deps, user),
      runs: runs.docs,
      targetSlug: await datasetSlug(user, scraper.targetDataset),
      webhookUrl: webhook,
    });
  };

  page(`${HOME}/scrapers/:id`, async (user, id, token) => {
    const body = await scraperBody(user, id, token, null);
    return ['Scraper', body];
  });

  action(`${HOME}/scrapers/:id/settings`, scraperPage, async (user, id, { form }) => {
    await updateScraperDocument(deps, user, id, {
      enabled: ticked(form, 'enabled'),
      targetDataset: optionalId(form, 'targetDataset'),
      autoImport: ticked(form, 'autoImport'),
      reviewDuplicates: parseReviewDuplicates(formText(form, 'reviewDuplicates', 20) || undefined),
      ...(formText(form, 'alertAfter', 3) ? { alertAfter: formText(form, 'alertAfter', 3) } : {}),
    });
    return { notice: 'Settings saved.' };
  });

  /** The scraper's envVars with `change` applied: the API's update takes the whole map. */
  const changeEnv = async (user: User, id: number, change: (vars: Record<string, string>) => void) => {
    const scraper = await readScraperDocument(deps, 'scrapers', user, id);
    // Without a prototype, a name such as __proto__ is a key like any other, for the rule to refuse.
    const vars = Object.assign(Object.create(null) as Record<string, string>, scraper.envVars ?? {});
    change(vars);
    await updateScraperDocument(deps, user, id, { envVars: vars });
  };
  const envName = (form: PostedForm['form']) => {
    const name = formText(form, 'name', 200);
    if (!name) throw new ValidationError('give the variable a name', { field: 'name' });
    return name;
  };

  action(
    `${HOME}/scrapers/:id/env`,
    (id) => `${scraperPage(id)}#env`,
    async (user, id, { form }) => {
      const name = envName(form);
      await changeEnv(user, id, (vars) => {
        vars[name] = form.value ?? '';
      });
      return { notice: `Saved ${name}; its value is not shown again.` };
    },
  );

  action(
    `${HOME}/scrapers/:id/env/remove`,
    (id) => `${scraperPage(id)}#env`,
    async (user, id, { form }) => {
      const name = envName(form);
      await changeEnv(user, id, (vars) => {
        delete vars[name];
      });
      return { notice: `Removed ${name}.` };
    },
  );

  action(
    `${HOME}/scrapers/:id/webhook`,
    (id) => `${scraperPage(id)}#webhook`,
    async (user, id, { form }, reply) => {
      const wanted = form.webhook;
      if (wanted !== 'on' && wanted !== 'off' && wanted !== 'rotate')
        throw new ValidationError('webhook must be on, off or rotate', { field: 'webhook' });
      const { webhookToken } = await updateScraperDocument(
        deps,
        user,
        id,
        wanted === 'rotate' ? { rotateWebhookToken: true } : { webhookEnabled: wanted === 'on' },
      );
      if (webhookToken) {
        // The URL is a credential: it is answered on this page, never carried by a redirect's URL.
        const token = csrf.token(reply.request, reply);
        const body = await scraperBody(user, id, token, webhookUrl(reply.request, webhookToken));
        void pages.render(reply, 200, 'Scraper', body, { user, token, scripts: true });
      }
      return {
        notice:
          wanted === 'off' ? 'Webhook turned off; its URL no longer works.' : 'The webhook was already on.',
      };
    },
  );

  action(
    `${HOME}/scrapers/:id/run`,
    (id, { form }) => backTo(form, scraperPage(id)),
    async (user, id) => {
      const scraper = await readScraperDocument(deps, 'scrapers', user, id);
      const { run } = await triggerScraperRun(deps.scrapers, user, id);
      return { notice: `Run ${run.id} of ${String(scraper.name)} queued.`, to: `${HOME}/runs/${run.id}` };
    },
  );

  page(`${HOME}/runs/:id`, async (user, id, token) => {
    const run = await readScraperDocument(deps, 'scraper-runs', user, id);
    const scraper = await readScraperDocument(deps, 'scrapers', user, run.scraper as number);
    return [`Run ${run.id}`, runView(token, run, scraper, await datasetSlug(user, scraper.targetDataset))];
  });

  action(
    `${HOME}/runs/:id/stop`,
    (id) => `${HOME}/runs/${id}`,
    async (user, id) => {
      const { cancelled } = await cancelRunDocument(deps, user, id);
      return { notice: cancelled ? 'Run stopped.' : 'The run had already finished.' };
    },
  );
};
