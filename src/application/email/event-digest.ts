import { subscriptionStream } from '../../domain/email/address.ts';
import type { DigestSender } from '../../ports/subscriptions/digest-sender.ts';
import type { EmailStore } from '../../ports/email/email-store.ts';

// The e-mail channel of subscriptions (the DigestSender port of src/ports/subscriptions/): mails a digest of matching events: rendered at send
// time by renderMail (escaped; titles are hostile input), with the subscription's own unsubscribe
// link, queued in the outbox only for a confirmed address of the owner still on that stream.

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
