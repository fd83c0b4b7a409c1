// The one navigation of the site: the account pages' bar and the Explore page's header list the same
// places in the same order, so a person can always get from the map to their imports and back
// (issue 29 §2). Here, at the top of the adapters, because both the server pages (adapters/pages)
// and the Explore page (adapters/web) draw it and neither may import the other.

export const SITE_NAV: readonly (readonly [href: string, label: string])[] = [
  ['/account/imports/new', 'New import'],
  ['/account/imports', 'My imports'],
  ['/account/scheduled-imports', 'Scheduled imports'],
  ['/account/scrapers', 'Scrapers'],
  ['/account/views', 'Saved views'],
  ['/account/subscriptions', 'Subscriptions'],
  ['/account', 'Account'],
  ['/', 'Explore'],
];

/** Where the brand link takes a person: their own start page; the dashboard only for admins. */
export function homeOf(role: 'admin' | 'user' | undefined): string {
  if (role === 'admin') return '/dashboard';
  return role === 'user' ? '/account' : '/';
}
