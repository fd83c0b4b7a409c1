import { requireAdmin, type Viewer } from '../../domain/access.ts';
import { DomainError, NotFoundError, ValidationError } from '../../domain/errors.ts';
import { IngestFailure } from '../../domain/ingest/failures.ts';
import {
  changedNotices,
  type LegalNotices,
  localPath,
  noticesFrom,
  publicUrl,
} from '../../domain/site/site-notices.ts';
import { normaliseEmail } from '../../domain/accounts/users.ts';
import type { CollectionRepository } from '../../ports/collections/collection-repository.ts';
import type { NewsletterService, SiteSettings } from '../../ports/site/site-settings.ts';

// The legal notices (public to read, admins change them), the newsletter subscription (public;
// forwarded to the service an admin configured) and the admin preview redirect to the Explore page.

export type SiteNoticeDeps = {
  settings: SiteSettings;
  newsletter: NewsletterService;
  repository: Pick<CollectionRepository, 'findById'>;
};

export async function getLegalNotices(deps: Pick<SiteNoticeDeps, 'settings'>): Promise<LegalNotices> {
  return noticesFrom(await deps.settings.read('legal-notices'));
}

export async function updateLegalNotices(
  deps: Pick<SiteNoticeDeps, 'settings'>,
  viewer: Viewer,
  change: Partial<LegalNotices>,
): Promise<LegalNotices> {
  const admin = requireAdmin(viewer);
  if (change.contactEmail) change = { ...change, contactEmail: normaliseEmail(change.contactEmail) };
  const next = changedNotices(await getLegalNotices(deps), change);
  await deps.settings.write('legal-notices', next, admin.id);
  return next;
}

type NewsletterSettings = { serviceUrl: string | null };

export async function getNewsletterSettings(
  deps: Pick<SiteNoticeDeps, 'settings'>,
  viewer: Viewer,
): Promise<NewsletterSettings> {
  requireAdmin(viewer);
  const stored = await deps.settings.read('newsletter');
  return { serviceUrl: typeof stored?.serviceUrl === 'string' ? stored.serviceUrl : null };
}

export async function updateNewsletterSettings(
  deps: Pick<SiteNoticeDeps, 'settings'>,
  viewer: Viewer,
  change: NewsletterSettings,
): Promise<NewsletterSettings> {
  const admin = requireAdmin(viewer);
  const next = { serviceUrl: publicUrl(change.serviceUrl, 'serviceUrl') };
  await deps.settings.write('newsletter', next, admin.id);
  return next;
}

/** Forwards the address to the configured service: 404 when none is set, 503 with a code when it did not take it. */
export async function subscribeToNewsletter(deps: SiteNoticeDeps, rawEmail: string): Promise<void> {
  const email = normaliseEmail(rawEmail);
  const stored = await deps.settings.read('newsletter');
  const serviceUrl = typeof stored?.serviceUrl === 'string' ? stored.serviceUrl : null;
  if (!serviceUrl) {
    // Not a server fault: this site has no newsletter (404), until an admin sets its service.
    throw new NotFoundError('this site has no newsletter: no newsletter service is configured', {
      code: 'NEWSLETTER_NOT_CONFIGURED',
    });
  }
  try {
    await deps.newsletter.subscribe(serviceUrl, email);
  } catch (error) {
    const code = error instanceof IngestFailure ? error.code : 'NEWSLETTER_UNREACHABLE';
    // The caller is anonymous: the kind of failure only, never the configured host, its address or
    // the system's error text (issue 30 §7). Admins see the service they set in its settings.
    throw new DomainError(
      'unavailable',
      'the newsletter service could not take the subscription; try again later',
      { code },
    );
  }
}

/** Where the admin preview sends the browser: the Explore page (or a local path) focused on one event or dataset. */
export async function previewRedirect(
  deps: Pick<SiteNoticeDeps, 'repository'>,
  viewer: Viewer,
  input: { event?: number; dataset?: number; path?: string },
): Promise<string> {
  requireAdmin(viewer);
  const target = new URL(localPath(input.path ?? '/'), 'http://local.invalid');
  if (input.event !== undefined && input.dataset !== undefined) {
    throw new ValidationError('name an event or a dataset, not both', {
      field: 'event',
      code: 'PREVIEW_TARGET',
    });
  }
  const find = async (collection: 'events' | 'datasets' | 'catalogs', id: number) =>
    (await deps.repository.findById(collection, viewer, id)) ??
    (() => {
      throw new NotFoundError(`no ${collection} document with id ${id}`, { code: 'DOCUMENT_NOT_FOUND' });
    })();
  let datasetId = input.dataset;
  if (input.event !== undefined) {
    const event = await find('events', input.event);
    datasetId = event.dataset as number;
    const location = event.location as { longitude: number; latitude: number } | null;
    if (location) {
      target.searchParams.set('lng', location.longitude.toFixed(4));
      target.searchParams.set('lat', location.latitude.toFixed(4));
      target.searchParams.set('zoom', '12.00');
    }
    const day = String(event.eventTimestamp).slice(0, 10);
    target.searchParams.set('startDate', day);
    target.searchParams.set('endDate', day);
  }
  if (datasetId !== undefined) {
    const dataset = await find('datasets', datasetId);
    const catalog = await find('catalogs', dataset.catalog as number);
    target.searchParams.set('catalog', String(catalog.slug));
    target.searchParams.set('datasets', String(dataset.slug));
  }
  return `${target.pathname}${target.search}`;
}
