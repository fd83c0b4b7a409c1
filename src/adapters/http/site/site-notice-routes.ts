import type { FastifyPluginAsync } from 'fastify';
import {
  getLegalNotices,
  getNewsletterSettings,
  previewRedirect,
  type SiteNoticeDeps,
  subscribeToNewsletter,
  updateLegalNotices,
  updateNewsletterSettings,
} from '../../../application/site/site-notices.ts';
import { errorResponses } from '../error-body.ts';
import { NoQuery } from '../schemas.ts';
import {
  LegalNoticesChange,
  LegalNoticesDoc,
  NewsletterSettingsDoc,
  NewsletterSubscription,
  PreviewQuery,
  Redirected,
  Subscribed,
} from './site-notice-schemas.ts';
import { viewerOf } from '../viewer.ts';

// Legal notices (public; admins set them), the newsletter subscription (public, rate limited) and
// its service URL (admins), and the admins' preview redirect to the Explore page.

const admin = { rateLimit: true, requiresUser: true } as const;
const tags = ['system'];

export const siteNoticeRoutes: FastifyPluginAsync<{ notices: SiteNoticeDeps }> = async (app, { notices }) => {
  app.get(
    '/api/legal-notices',
    {
      config: { rateLimit: true },
      schema: {
        tags,
        summary: 'The site’s legal notices (public)',
        description:
          'Terms and privacy URLs, the registration disclaimer and a contact e-mail; null where an admin set none.',
        querystring: NoQuery,
        response: { 200: LegalNoticesDoc, ...errorResponses(429) },
      },
    },
    async () => getLegalNotices(notices),
  );

  app.patch(
    '/api/legal-notices',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Change the legal notices (admins)',
        description: 'Fields left out stay; null or "" clears one. URLs must be http(s).',
        querystring: NoQuery,
        body: LegalNoticesChange,
        response: { 200: LegalNoticesDoc, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => updateLegalNotices(notices, viewerOf(request), request.body as never),
  );

  app.get(
    '/api/newsletter/settings',
    {
      config: admin,
      schema: {
        tags,
        summary: 'The newsletter service (admins)',
        querystring: NoQuery,
        response: { 200: NewsletterSettingsDoc, ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => getNewsletterSettings(notices, viewerOf(request)),
  );

  app.patch(
    '/api/newsletter/settings',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Set the newsletter service (admins)',
        querystring: NoQuery,
        body: NewsletterSettingsDoc,
        response: { 200: NewsletterSettingsDoc, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) =>
      updateNewsletterSettings(notices, viewerOf(request), request.body as { serviceUrl: string | null }),
  );

  app.post(
    '/api/newsletter/subscribe',
    {
      config: { rateLimit: true },
      schema: {
        tags,
        summary: 'Subscribe an e-mail address to the newsletter (public, rate limited)',
        description:
          'Forwarded to the service an admin configured, through the SSRF guard, within 5 s; redirects are not followed. ' +
          '404 NEWSLETTER_NOT_CONFIGURED when none is set; 503 with NEWSLETTER_TIMEOUT, NEWSLETTER_REDIRECT_REFUSED, ' +
          'NEWSLETTER_REJECTED, SSRF_BLOCKED or NEWSLETTER_UNREACHABLE when the service did not take it.',
        querystring: NoQuery,
        body: NewsletterSubscription,
        response: {
          200: Subscribed,
          ...errorResponses(400, 404, 429, 503),
        },
      },
    },
    async (request) => {
      await subscribeToNewsletter(notices, (request.body as { email: string }).email);
      return { success: true as const, message: 'Subscribed' };
    },
  );

  app.get(
    '/api/preview',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Open the Explore page focused on one event or dataset (admins)',
        description:
          '302 to `path` (default `/`, the Explore page) with the view of `event` (its place, day and dataset) or `dataset`. ' +
          '`path` must be a path of this site: `//host`, `/\\host`, schemes and control characters are a 400 UNSAFE_REDIRECT.',
        querystring: PreviewQuery,
        response: { 302: Redirected, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const location = await previewRedirect(notices, viewerOf(request), request.query as never);
      return reply.redirect(location, 302);
    },
  );
};
