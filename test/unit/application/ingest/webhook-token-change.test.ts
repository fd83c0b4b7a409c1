import t from 'tap';
import { changeWebhookToken } from '../../../../src/application/ingest/webhook-token-change.ts';
import type { WebhookTokens } from '../../../../src/ports/webhook-tokens.ts';

// The one life of a webhook token, shared by scrapers (setScraperWebhook) and scheduled imports
// (createScheduledIngest, updateScheduledIngest).

function countingTokens(): WebhookTokens & { issued: number } {
  const tokens = {
    issued: 0,
    generate() {
      tokens.issued += 1;
      return { token: `token-${tokens.issued}`, hash: `hash-${tokens.issued}` };
    },
    hash: (token: string) => `hash-of-${token}`,
  };
  return tokens;
}

t.test('enabling issues a token shown once and its hash to store', async (t) => {
  const tokens = countingTokens();
  t.same(changeWebhookToken(tokens, false, true), { token: 'token-1', storedHash: 'hash-1' });
  t.same(
    changeWebhookToken(tokens, false, true),
    { token: 'token-2', storedHash: 'hash-2' },
    'fresh each time',
  );
});

t.test('disabling forgets the stored hash; no token is shown', async (t) => {
  const tokens = countingTokens();
  t.same(changeWebhookToken(tokens, true, false), { token: null, storedHash: null });
  t.equal(tokens.issued, 0);
});

t.test('no change keeps what is stored (undefined), unless a rotation is asked for', async (t) => {
  const tokens = countingTokens();
  t.same(changeWebhookToken(tokens, true, true), { token: null, storedHash: undefined });
  t.same(changeWebhookToken(tokens, false, false), { token: null, storedHash: undefined });
  t.same(
    changeWebhookToken(tokens, false, false, true),
    { token: null, storedHash: undefined },
    'off stays off',
  );
  t.equal(tokens.issued, 0);
  t.same(changeWebhookToken(tokens, true, true, true), { token: 'token-1', storedHash: 'hash-1' }, 'rotated');
});
