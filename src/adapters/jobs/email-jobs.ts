import type { PgBoss } from 'pg-boss';
import type { OutboxSender } from '../../application/email/send-outbox.ts';

// The `email-outbox` queue: a job means "the outbox has due mails"; its worker drains them
// (application/email/send-outbox.ts). The outbox table, not the job, is the durable record: a job
// lost with a killed worker is replaced by the schedule manager's pass (every minute), and the mail
// it was sending by the outbox row's lease. `stately`: one queued and one running drain at most.

const EMAIL_OUTBOX_QUEUE = 'email-outbox';

export const EMAIL_QUEUES = [
  {
    name: EMAIL_OUTBOX_QUEUE,
    options: { policy: 'stately' as const, retryLimit: 0, heartbeatSeconds: 10, expireInSeconds: 3600 },
  },
];

/** Asks a worker to drain the outbox now (after a mail was queued, and on each schedule pass). */
export async function kickEmailOutbox(boss: PgBoss): Promise<void> {
  await boss.send(EMAIL_OUTBOX_QUEUE, {});
}

export async function startEmailWorker(boss: PgBoss, sender: OutboxSender): Promise<string> {
  return boss.work(EMAIL_OUTBOX_QUEUE, { localConcurrency: 1, pollingIntervalSeconds: 1 }, async () => {
    // Batches until one comes back short (nothing more due); retries due later wait for a later pass.
    for (;;) {
      const done = await sender.drain({ max: 50 });
      if (done.sent + done.failed < 50) return;
    }
  });
}
