import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import {
  loadAccessPolicy,
  overlay,
  SHIPPED_QUOTAS_FILE,
} from '../../../../src/adapters/config/access-policy.ts';
import { ConfigError, projectRoot } from '../../../../src/adapters/config/environment.ts';

// The quotas file outlives upgrades: an operator's file is read over the shipped defaults, renamed
// keys are read under their new names, and anything else wrong is one configuration line.

const PREVIOUS_VERSION = path.join(projectRoot, 'test/fixtures/config/quotas-4fdef31.yaml');
const shipped = loadAccessPolicy(SHIPPED_QUOTAS_FILE, () => {});

function fileWith(t: Test, text: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-quotas-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'quotas.yaml');
  writeFileSync(file, text);
  return file;
}

t.test(
  'the previous version’s file loads: new keys take the shipped defaults, renamed keys their new name',
  async (t) => {
    const warnings: string[] = [];
    const policy = loadAccessPolicy(PREVIOUS_VERSION, (line) => warnings.push(line));
    t.equal(
      policy.sessionMaxAgeSeconds,
      shipped.sessionMaxAgeSeconds,
      'a key added since: the shipped value',
    );
    t.same(
      policy.passwordConfirmations,
      shipped.passwordConfirmations,
      'a section added since: the shipped one',
    );
    t.same(
      policy.loginAttempts.perIpAndEmail.map((w) => [w.name, w.seconds, w.limit]),
      [
        ['burst', 60, 10],
        ['hourly', 3600, 30],
        ['daily', 86400, 100],
      ],
      'the old perEmail windows are read as perIpAndEmail',
    );
    t.equal(warnings.length, 1, 'the rename is reported once');
    t.match(warnings[0], /loginAttempts\.perEmail is read as loginAttempts\.perIpAndEmail/);
  },
);

t.test('an operator’s value wins over the shipped one, key by key', async (t) => {
  const file = fileWith(t, 'tokenTtlSeconds: 3600\nquotas:\n  fileUploadsPerDay:\n    levels: { 1: 7 }\n');
  const policy = loadAccessPolicy(file, () => {});
  t.equal(policy.tokenTtlSeconds, 3600);
  t.equal(policy.quotas.fileUploadsPerDay.limits[1], 7, 'the level the file names');
  t.equal(
    policy.quotas.fileUploadsPerDay.limits[2],
    shipped.quotas.fileUploadsPerDay.limits[2],
    'the others shipped',
  );
  t.equal(policy.quotas.fileUploadsPerDay.period, 'daily');
  t.same(policy.rateLimits, shipped.rateLimits);
});

t.test('an empty file is the shipped policy', async (t) => {
  t.same(
    loadAccessPolicy(fileWith(t, ''), () => {}),
    shipped,
  );
});

t.test(
  'anything else wrong is one configuration error naming QUOTAS_CONFIG, the file and the key',
  async (t) => {
    const cases: [string, RegExp][] = [
      ['tokenTtlSecs: 60\n', /tokenTtlSecs: unknown key/],
      [
        'quotas:\n  fileUploadsPerDay:\n    levels: { 1: many }\n',
        /quotas\.fileUploadsPerDay\.levels\.1 must be a whole number/,
      ],
      [
        'rateLimits:\n  anonymous:\n    weekly: { seconds: 5, limit: 1 }\n',
        /rateLimits\.anonymous\.weekly: unknown window/,
      ],
      [
        'tokenTtlSeconds: 7200\nsessionMaxAgeSeconds: 60\n',
        /sessionMaxAgeSeconds must be at least tokenTtlSeconds/,
      ],
      ['quotas: [1, 2]\n', /quotas must be a mapping/],
      ['- just\n- a list\n', /must be a mapping of keys/],
      ['quotas: {\n', /cannot read/],
      ['__proto__: { polluted: 1 }\n', /__proto__: unknown key/],
    ];
    for (const [text, message] of cases) {
      const file = fileWith(t, text);
      const error = (() => {
        try {
          loadAccessPolicy(file, () => {});
        } catch (caught) {
          return caught;
        }
        return null;
      })();
      t.ok(error instanceof ConfigError, `${JSON.stringify(text)} is a configuration error`);
      const problem = (error as ConfigError).problems[0];
      t.equal(problem?.variable, 'QUOTAS_CONFIG');
      t.match(problem?.problem, message);
      t.notMatch(problem?.problem, /\n/, 'one line');
      t.equal(({} as Record<string, unknown>).polluted, undefined);
    }
  },
);

t.test('a missing file is one configuration error too', async (t) => {
  t.throws(() => loadAccessPolicy('/nonexistent/quotas.yaml', () => {}), ConfigError);
});

t.test('a set of rate windows is replaced whole: an omitted window is no window', async (t) => {
  const file = fileWith(t, 'rateLimits:\n  anonymous:\n    burst: { seconds: 10, limit: 5 }\n');
  const policy = loadAccessPolicy(file, () => {});
  t.same(
    policy.rateLimits.anonymous.map((w) => [w.name, w.seconds, w.limit]),
    [['burst', 10, 5]],
  );
  t.same(policy.rateLimits.byTrustLevel, shipped.rateLimits.byTrustLevel, 'the rest shipped');
});

t.test('overlay merges mappings and replaces everything else', async (t) => {
  t.same(overlay({ a: { b: 1, c: 2 }, d: 'unlimited' }, { a: { c: 3 }, d: { e: 1 } }), {
    a: { b: 1, c: 3 },
    d: { e: 1 },
  });
});
