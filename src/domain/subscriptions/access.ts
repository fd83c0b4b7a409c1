import { ForbiddenError, requireViewer, type Viewer } from '../access.ts';

// Who may manage subscriptions (issue 39 §2): the owner, with a session or a write-scoped API key.
// A read key is refused even for the lists (a subscription holds a signing secret and sends data
// out, so it is managed with the powers that change things); someone else's subscription looks
// missing (the caller gets a 404), like everything that is not theirs.

export function requireSubscriber(viewer: Viewer): Exclude<Viewer, null> {
  const caller = requireViewer(viewer);
  if (caller.key?.scope === 'read')
    throw new ForbiddenError('Subscriptions need a session or a write API key', 'API_KEY_READ_ONLY');
  return caller;
}

export function ownsSubscription(viewer: Exclude<Viewer, null>, subscription: { ownerId: number }): boolean {
  return subscription.ownerId === viewer.id;
}
