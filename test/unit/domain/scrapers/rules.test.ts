import t from 'tap';
import { webhookTokens } from '../../../../src/adapters/security/webhook-tokens.ts';
import { ValidationError } from '../../../../src/domain/errors.ts';
import { sourceChanged, validateCodeMap, validateGitSource } from '../../../../src/domain/scrapers/repos.ts';
import { isStuck, STUCK_MARGIN_SECS } from '../../../../src/domain/scrapers/runs.ts';
import { webhookChange } from '../../../../src/domain/ingest/webhook-tokens.ts';
import { isWebhookTokenFormat, tokenFromBytes } from '../../../../src/domain/ingest/webhook-tokens.ts';

t.test('upload code maps: ".." anywhere or a leading "/" is a 400 naming the file', async (t) => {
  for (const name of ['../etc/passwd', 'a/../../b', 'x..y', '/abs.py']) {
    t.throws(() => validateCodeMap({ 'scrapers.yml': '', [name]: 'x' }), {
      constructor: ValidationError,
      code: 'INVALID_PATH',
      message: new RegExp(name.replace(/[./]/g, '\\$&')),
    });
  }
  t.throws(() => validateCodeMap({}), { code: 'INVALID_CODE' });
  t.throws(() => validateCodeMap(['a']), { code: 'INVALID_CODE' });
  t.throws(() => validateCodeMap({ 'a.py': 3 }), { code: 'INVALID_CODE' });
  t.same(validateCodeMap({ 'scrapers.yml': 'x', 'lib/util.py': 'y' }), {
    'scrapers.yml': 'x',
    'lib/util.py': 'y',
  });
});

t.test('git sources: https only, no credentials, a sane branch (default main)', async (t) => {
  t.same(validateGitSource('https://example.org/a/b.git', undefined), {
    gitUrl: 'https://example.org/a/b.git',
    gitBranch: 'main',
  });
  for (const url of [
    'http://example.org/a.git',
    'git@example.org:a.git',
    'https://u:p@example.org/a.git',
    'file:///x',
  ]) {
    t.throws(() => validateGitSource(url, 'main'), { code: 'INVALID_GIT_URL' }, url);
  }
  for (const branch of ['-x', 'a..b', '/x', 'a b']) {
    t.throws(
      () => validateGitSource('https://example.org/a.git', branch),
      { code: 'INVALID_GIT_BRANCH' },
      branch,
    );
  }
});

t.test(
  'a change of git URL, branch or code is a source change; the same code in another order is not',
  async (t) => {
    const repo = {
      id: 1,
      name: 'r',
      slug: 'r',
      sourceType: 'upload' as const,
      gitUrl: null,
      gitBranch: null,
      code: { 'a.py': '1', 'b.py': '2' },
      catalogId: null,
      createdBy: 1,
      syncStatus: 'synced' as const,
      lastSyncAt: null,
      lastSyncError: null,
    };
    t.notOk(sourceChanged(repo, { sourceType: 'upload', code: { 'b.py': '2', 'a.py': '1' } }));
    t.ok(sourceChanged(repo, { sourceType: 'upload', code: { 'a.py': '1', 'b.py': '3' } }));
    const git = {
      ...repo,
      sourceType: 'git' as const,
      gitUrl: 'https://h/a.git',
      gitBranch: 'main',
      code: null,
    };
    t.notOk(sourceChanged(git, { sourceType: 'git', gitUrl: 'https://h/a.git', gitBranch: 'main' }));
    t.ok(sourceChanged(git, { sourceType: 'git', gitUrl: 'https://h/a.git', gitBranch: 'dev' }));
    t.ok(sourceChanged(git, { sourceType: 'git', gitUrl: 'https://h/b.git', gitBranch: 'main' }));
  },
);

t.test('webhook tokens: 64 hex from 32 bytes, hashed, rotated by disable + enable', async (t) => {
  const tokens = webhookTokens;
  const { token: a, hash } = tokens.generate();
  const { token: b } = tokens.generate();
  t.ok(isWebhookTokenFormat(a));
  t.equal(hash, tokens.hash(a), 'the hash to store is the hash of the token');
  t.not(a, b);
  t.match(tokens.hash(a), /^[0-9a-f]{64}$/);
  t.not(tokens.hash(a), a);
  t.equal(tokens.hash(a), tokens.hash(a));
  t.equal(tokenFromBytes(new Uint8Array(32).fill(255)), 'f'.repeat(64));
  t.throws(() => tokenFromBytes(new Uint8Array(16)));
  t.notOk(isWebhookTokenFormat('F'.repeat(64)));
  t.notOk(isWebhookTokenFormat('a'.repeat(63)));
  t.same(webhookChange(false, true), { action: 'issue' });
  t.same(webhookChange(true, false), { action: 'revoke' });
  t.same(webhookChange(true, true), { action: 'none' });
  t.same(webhookChange(true, true, true), { action: 'issue' });
  t.same(webhookChange(false, false), { action: 'none' });
});

t.test('a run is stuck once it has run longer than its timeout plus the margin', async (t) => {
  const startedAt = new Date('2026-01-01T10:00:00Z');
  const after = (secs: number) => new Date(startedAt.getTime() + secs * 1000);
  t.notOk(isStuck({ status: 'running', startedAt }, 300, after(300 + STUCK_MARGIN_SECS)));
  t.ok(isStuck({ status: 'running', startedAt }, 300, after(300 + STUCK_MARGIN_SECS + 1)));
  t.notOk(isStuck({ status: 'success', startedAt }, 300, after(10_000)));
  t.notOk(isStuck({ status: 'queued', startedAt: null }, 300, after(10_000)));
});

// Scraper access is tested with the one access rule (test/unit/domain/access.test.ts), the scraper
// quotas' numbers with config/quotas.yaml (test/unit/domain/accounts/quotas.test.ts).
