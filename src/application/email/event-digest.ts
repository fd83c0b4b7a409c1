import { subscriptionStream } from '../../domain/email/address.ts';
import type { DigestEvent } from '../../domain/email/messages.ts';
import type { EmailStore } from '../../ports/email/email-store.ts';

// The seam subscriptions (branch h39hook) call to mail a digest of matching events: rendered at send
// time by renderMail (escaped; titles are hostile input), with the subscription's own unsubscribe
// link, queued in the outbox only for a confirmed address of the owner still on that stream.

export type { DigestEvent };

export interface DigestSender {
  sendEventDigest(input: {
    ownerId: number;
    emailAddressId: string;
    subscriptionId: string;
    subscriptionName: string;
    events: DigestEvent[];
    moreCount: number;
    manageUrl: string;
  }): Promise<'queued' | 'address-not-confirmed'>;
}

export function createDigestSender(deps: { store: EmailStore; enabled: boolean }): DigestSender {
  return {
    async sendEventDigest(input) {
      // Without SMTP nothing is queued: the address is as good as unconfirmed for delivery.
      if (!deps.enabled) return 'address-not-confirmed';
      return deps.store.queueDigest(
        input.ownerId,
        input.emailAddressId,
        subscriptionStream(input.subscriptionId),
        (token) => ({
          kind: 'digest',
          subscriptionName: input.subscriptionName,
          events: input.events,
          moreCount: input.moreCount,
          manageUrl: input.manageUrl,
          unsubscribeToken: token,
        }),
      );
    },
  };
}
