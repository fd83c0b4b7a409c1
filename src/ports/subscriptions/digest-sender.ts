// The e-mail channel's seam (issue 39 §2, e-mail digests): a subscription whose channel is 'email'
// hands its matched events to this port; the implementation (confirmed addresses, SMTP) is the
// e-mail feature's.

export type DigestEvent = {
  id: string;
  title: string | null;
  timestamp: string | null;
  datasetTitle: string;
  url: string;
};

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
