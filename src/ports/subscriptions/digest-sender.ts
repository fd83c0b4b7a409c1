import type { DigestEvent } from '../../domain/email/messages.ts';

// The e-mail channel's seam (issue 39 §2, e-mail digests): a subscription whose channel is 'email'
// hands its matched events to this port; the implementation (confirmed addresses, SMTP) is the
// e-mail feature's.

// The events as a digest lists them: the e-mail feature renders them (domain/email/messages.ts).
export type { DigestEvent };

export interface DigestSender {
  // Queues one e-mail listing these events to a confirmed address of the owner.
  sendEventDigest(input: {
    ownerId: number;
    emailAddressId: string;
    subscriptionId: number;
    subscriptionName: string;
    events: DigestEvent[];
    moreCount: number;
    manageUrl: string;
  }): Promise<'queued' | 'address-not-confirmed'>;
}
