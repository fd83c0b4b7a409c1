import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import {
  type CollectionDeps,
  createDocument,
  deleteDocument,
  findDocument,
  findDocuments,
  updateDocument,
} from '../../../application/collections/collection-documents.ts';
import { changeFeatureFlags, readFeatureFlags } from '../../../application/site/feature-flags.ts';
import type { LoginDeps } from '../../../application/accounts/log-in.ts';
import type { Viewer } from '../../../domain/access.ts';
import { DomainError, ValidationError } from '../../../domain/errors.ts';
import { parseTrustLevel } from '../../../domain/accounts/users.ts';
import { FEATURE_FLAG_NAMES } from '../../../domain/site/feature-flags.ts';
import { RateLimitedError } from '../../../domain/accounts/rate-limits.ts';
import type { FeatureFlagStore } from '../../../ports/site/feature-flag-store.ts';
import type { Quotas } from '../../../ports/accounts/quotas.ts';
import { acceptForms, CsrfError, csrfProtection, csrfRefusal, type Form, verifiedForm } from '../csrf.ts';
import type { Html } from '../html.ts';
import { type Flash, page } from '../layout.ts';
import { registerLoginPages } from '../login-pages.ts';
import { recordId } from '../account-pages.ts';
import { messageView } from '../layout.ts';
import { flashFrom, redirect, htmlReply } from '../replies.ts';
import {
  catalogsView,
  catalogView,
  datasetView,
  overviewView,
  settingsView,
  usersView,
} from './dashboard-views.ts';
import { viewerOf } from '../../http/viewer.ts';
import { pageFailure } from '../../http/error-handling.ts';
import { parseSlug } from '../../../domain/collections/slugs.ts';

// The admin dashboard: server-rendered pages under /dashboard that work without JavaScript. Every
// change is a form post with a CSRF token, answered with a redirect (post/redirect/get) that carries
// a flash message. The pages use the same use cases, and so the same access rules, as the API.

type DashboardDeps = {
  login: LoginDeps;
  collections: CollectionDeps;
  flags: FeatureFlagStore;
  quotas: Quotas;
  csrfSecret: string;
};

type Admin = Exclude<Viewer, null>;

const hidden = { schema: { hide: true } };

const text = (value: string | undefined) => (value ?? '').trim();

function described(form: Form) {
  const description = text(form.description);
  return {
    title: text(form.title),
    slug: parseSlug(text(form.slug), 'slug'),
    description: description === '' ? null : description,
    isPublic: form.isPublic === 'on',
  };
}

export const dashboardRoutes: FastifyPluginAsync<DashboardDeps> = async (app, deps) => {
  const csrf = csrfProtection(deps.csrfSecret);

  acceptForms(app);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof CsrfError) {
      const [title, heading, text] = csrfRefusal(error, 'this dashboard');
      return reply
        .status(403)
        .type('text/html; charset=utf-8')
        .send(page({ title, body: messageView(heading, text, ['/dashboard', 'Back to the dashboard']) }));
    }
    const { status, heading, message } = pageFailure(error, reply);
    if (status >= 500) request.log.error({ err: error }, 'dashboard request failed');
    return reply
      .status(status)
      .type('text/html; charset=utf-8')
      .send(
        page({
          title: 'Error',
          body: messageView(heading, message, ['/dashboard', 'Back to the dashboard']),
        }),
      );
  });

  const render = (
    reply: FastifyReply,
    status: number,
    title: string,
    body: Html,
    extra: { admin?: Admin; token?: string; flash?: Flash; active?: string } = {},
  ) =>
    htmlReply(reply, status).send(
      page({
        title,
        body,
        user: extra.admin ?? null,
        ...(extra.token ? { csrf: extra.token } : {}),
        ...(extra.flash ? { flash: extra.flash } : {}),
        ...(extra.active ? { active: extra.active } : {}),
      }),
    );

  /** The admin behind this request, or a redirect to the login page (or a 403 for non-admins). */
  const admin = (request: FastifyRequest, reply: FastifyReply): Admin | null => {
    const viewer = viewerOf(request);
    if (!viewer) {
      void redirect(reply, '/dashboard/login');
      return null;
    }
    if (viewer.role !== 'admin') {
      void render(
        reply,
        403,
        'Forbidden',
        messageView('Admins only', 'The dashboard is for admins; this account is not one.'),
      );
      return null;
    }
    return viewer;
  };

  const form = (request: FastifyRequest): Form => verifiedForm(csrf, request);

  /** Runs a change; a refused change comes back to `back` with its message, not an error page. */
  const change = async (reply: FastifyReply, back: string, work: () => Promise<Flash & { to?: string }>) => {
    try {
      const outcome = await work();
      return redirect(reply, outcome.to ?? back, outcome);
    } catch (error) {
      if (error instanceof DomainError && !(error instanceof RateLimitedError))
        return redirect(reply, back, { error: error.message });
      throw error;
    }
  };

  // ---- login and logout ----

  registerLoginPages(app, {
    login: deps.login,
    csrf,
    paths: { login: '/dashboard/login', logout: '/dashboard/logout', home: '/dashboard' },
    heading: 'Dashboard login',
    refuse: (user) => (user.role === 'admin' ? null : 'This account is not an admin.'),
    render: (reply, status, body, flash) => render(reply, status, 'Log in', body, { flash }),
  });

  // ---- pages ----

  type PageContext = { user: Admin; token: string; id: number; request: FastifyRequest };
  type ActionContext = { user: Admin; body: Form; id: number };

  /** A page for admins: `handler` returns its title and body; the frame, token and flash are added here. */
  const view = (
    path: string,
    active: string,
    handler: (ctx: PageContext) => Promise<{ title: string; body: Html }>,
  ) =>
    app.get(path, hidden, async (request, reply) => {
      const user = admin(request, reply);
      if (!user) return reply;
      const token = csrf.token(request, reply);
      // An id that is not one (`abc`, `-1`, 99999999999999999999) is the 404 page, not a NaN for the database.
      const id = recordId((request.params as { id?: string }).id);
      const { title, body } = await handler({ user, token, id, request });
      return render(reply, 200, title, body, { admin: user, token, flash: flashFrom(request), active });
    });

  /** A form post by an admin, checked for its CSRF token, answered with a redirect to `back` or `to`. */
  const action = (
    path: string,
    back: (ctx: ActionContext) => Promise<string> | string,
    handler: (ctx: ActionContext) => Promise<Flash & { to?: string }>,
    /** Values no form of the dashboard sends: a 400 page, not a notice (a forged or broken post). */
    checkForm: (body: Form) => void = () => {},
  ) =>
    app.post(path, hidden, async (request, reply) => {
      const user = admin(request, reply);
      if (!user) return reply;
      const ctx = { user, body: form(request), id: recordId((request.params as { id?: string }).id) };
      checkForm(ctx.body);
      return change(reply, await back(ctx), () => handler(ctx));
    });

  const count = async (user: Admin, collection: 'users' | 'catalogs' | 'datasets' | 'events') =>
    (await findDocuments(deps.collections, collection, user, { limit: 1 })).totalDocs;
  const datasetOf = (user: Admin, id: number) => findDocument(deps.collections, 'datasets', user, id);

  view('/dashboard', '/dashboard', async ({ user }) => ({
    title: 'Overview',
    body: overviewView(
      {
        users: await count(user, 'users'),
        catalogs: await count(user, 'catalogs'),
        datasets: await count(user, 'datasets'),
        events: await count(user, 'events'),
      },
      await readFeatureFlags(deps.flags),
    ),
  }));

  view('/dashboard/settings', '/dashboard/settings', async ({ token }) => ({
    title: 'Settings',
    body: settingsView(token, await readFeatureFlags(deps.flags)),
  }));

  action(
    '/dashboard/settings',
    () => '/dashboard/settings',
    async ({ user, body }) => {
      // An unchecked box is not sent at all: every flag not in the form is off.
      await changeFeatureFlags(
        deps.flags,
        user,
        Object.fromEntries(FEATURE_FLAG_NAMES.map((name) => [name, body[name] === 'on'])),
      );
      return { notice: 'Settings saved.' };
    },
  );

  view('/dashboard/users', '/dashboard/users', async ({ user, token, request }) => {
    const pageNumber = Math.max(1, Number((request.query as { page?: string }).page) || 1);
    const found = await findDocuments(deps.collections, 'users', user, {
      limit: 50,
      page: pageNumber,
      sort: 'email',
    });
    const rows = await Promise.all(
      found.docs.map(async (doc) => ({ doc, quotas: await deps.quotas.status(doc.id) })),
    );
    return { title: 'Users', body: usersView(token, rows, user.id, found) };
  });

  action(
    '/dashboard/users/:id',
    () => '/dashboard/users',
    async ({ user, body, id }) => {
      const values: Record<string, unknown> = { trustLevel: parseTrustLevel(body.trustLevel) };
      if (body.role !== undefined) values.role = body.role;
      const doc = await updateDocument(deps.collections, 'users', user, id, values);
      return { notice: `Saved ${String(doc.email)}.` };
    },
    (body) => {
      parseTrustLevel(body.trustLevel);
      if (body.role !== undefined && body.role !== 'admin' && body.role !== 'user') {
        throw new ValidationError('role must be admin or user', { field: 'role', code: 'INVALID_ROLE' });
      }
    },
  );

  view('/dashboard/catalogs', '/dashboard/catalogs', async ({ user, token }) => {
    const catalogs = await findDocuments(deps.collections, 'catalogs', user, { limit: 1000, sort: 'title' });
    const users = await findDocuments(deps.collections, 'users', user, { limit: 1000 });
    const datasets = await findDocuments(deps.collections, 'datasets', user, { limit: 1000 });
    const counts = new Map<number, number>();
    for (const d of datasets.docs)
      counts.set(d.catalog as number, (counts.get(d.catalog as number) ?? 0) + 1);
    const owners = new Map(users.docs.map((u) => [u.id, String(u.email)]));
    return { title: 'Catalogs', body: catalogsView(token, catalogs.docs, owners, counts) };
  });

  action(
    '/dashboard/catalogs',
    () => '/dashboard/catalogs',
    async ({ user, body }) => {
      const doc = await createDocument(deps.collections, 'catalogs', user, described(body));
      return { notice: `Created catalog ${String(doc.title)}.`, to: `/dashboard/catalogs/${doc.id}` };
    },
  );

  view('/dashboard/catalogs/:id', '/dashboard/catalogs', async ({ user, token, id }) => {
    const catalog = await findDocument(deps.collections, 'catalogs', user, id);
    const datasets = await findDocuments(deps.collections, 'datasets', user, {
      'where[catalog][equals]': String(id),
      limit: 1000,
      sort: 'title',
    });
    return { title: String(catalog.title), body: catalogView(token, catalog, datasets.docs) };
  });

  const catalogPage = ({ id }: ActionContext) => `/dashboard/catalogs/${id}`;

  action('/dashboard/catalogs/:id', catalogPage, async ({ user, body, id }) => {
    await updateDocument(deps.collections, 'catalogs', user, id, described(body));
    return { notice: 'Catalog saved.' };
  });

  action('/dashboard/catalogs/:id/delete', catalogPage, async ({ user, id }) => {
    const doc = await deleteDocument(deps.collections, 'catalogs', user, id);
    return { notice: `Deleted catalog ${String(doc.title)}.`, to: '/dashboard/catalogs' };
  });

  action('/dashboard/catalogs/:id/datasets', catalogPage, async ({ user, body, id }) => {
    const doc = await createDocument(deps.collections, 'datasets', user, { ...described(body), catalog: id });
    return { notice: `Created dataset ${String(doc.title)}.` };
  });

  view('/dashboard/datasets/:id', '/dashboard/catalogs', async ({ user, token, id }) => {
    const dataset = await datasetOf(user, id);
    const catalog = await findDocument(deps.collections, 'catalogs', user, dataset.catalog as number);
    return { title: String(dataset.title), body: datasetView(token, dataset, catalog) };
  });

  const datasetPage = ({ id }: ActionContext) => `/dashboard/datasets/${id}`;

  action('/dashboard/datasets/:id', datasetPage, async ({ user, body, id }) => {
    await updateDocument(deps.collections, 'datasets', user, id, described(body));
    return { notice: 'Dataset saved.' };
  });

  action(
    '/dashboard/datasets/:id/visibility',
    async ({ user, id }) => `/dashboard/catalogs/${(await datasetOf(user, id)).catalog as number}`,
    async ({ user, body, id }) => {
      const doc = await updateDocument(deps.collections, 'datasets', user, id, {
        isPublic: body.isPublic === 'on',
      });
      return { notice: `${String(doc.title)} is now ${doc.isPublic ? 'public' : 'private'}.` };
    },
  );

  action('/dashboard/datasets/:id/delete', datasetPage, async ({ user, id }) => {
    const dataset = await datasetOf(user, id);
    await deleteDocument(deps.collections, 'datasets', user, id);
    return {
      notice: `Deleted dataset ${String(dataset.title)}.`,
      to: `/dashboard/catalogs/${dataset.catalog as number}`,
    };
  });
};
