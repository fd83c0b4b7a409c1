// Pure checks on what a run request may contain: paths, env, code URLs, addresses.
import t from 'tap';
import { classifyAddress } from '../src/code/address-guard.ts';
import { parseCodeUrl } from '../src/code/git.ts';
import { checkCodeMap, checkRelativePath } from '../src/code/inline.ts';
import { checkEnv } from '../src/workspace.ts';

t.test('relative paths: traversal, absolute and odd names are refused', async (t) => {
  for (const bad of ['../x.py', 'a/../../x.py', 'a/..', '/etc/passwd', '', '.', 'a\\..\\x', 'dir/', 'a\0b']) {
    t.throws(
      () => checkRelativePath(bad, 'code file'),
      { code: 'INVALID_PATH', statusCode: 400 },
      JSON.stringify(bad),
    );
  }
  t.equal(checkRelativePath('src/./main.py', 'entrypoint'), 'src/main.py');
  t.equal(checkRelativePath('a//b.py', 'entrypoint'), 'a/b.py');
});

t.test('code maps: duplicates after normalisation, empty maps and oversize maps are refused', async (t) => {
  t.throws(() => checkCodeMap({ 'a.py': '1', './a.py': '2' }, 100), { code: 'INVALID_PATH' });
  t.throws(() => checkCodeMap({}, 100), { code: 'INVALID_CODE' });
  t.throws(() => checkCodeMap({ 'a.py': 'x'.repeat(101) }, 100), { code: 'CODE_TOO_LARGE' });
  t.same([...checkCodeMap({ 'lib/x.py': 'x', 'main.py': 'y' }, 100).keys()], ['lib/x.py', 'main.py']);
});

t.test('env: names, reserved names and line breaks', async (t) => {
  t.throws(() => checkEnv({ '1X': 'a' }), { code: 'INVALID_ENV' });
  t.throws(() => checkEnv({ 'A-B': 'a' }), { code: 'INVALID_ENV' });
  t.throws(() => checkEnv({ CHRONOMAP_OUTPUT_DIR: '/' }), { code: 'INVALID_ENV' });
  t.throws(() => checkEnv({ KEY: 'a\nB=c' }), { code: 'INVALID_ENV' });
  t.doesNotThrow(() => checkEnv({ API_TOKEN: 'a b=c "d"' }));
});

t.test('code_url: https only, branch after #, no option-like branch', async (t) => {
  t.throws(() => parseCodeUrl('http://example.org/r.git'), { code: 'INVALID_CODE_URL' });
  t.throws(() => parseCodeUrl('git://example.org/r.git'), { code: 'INVALID_CODE_URL' });
  t.throws(() => parseCodeUrl('file:///etc'), { code: 'INVALID_CODE_URL' });
  t.throws(() => parseCodeUrl('not a url'), { code: 'INVALID_CODE_URL' });
  t.throws(() => parseCodeUrl('https://example.org/r.git#--upload-pack=touch'), { code: 'INVALID_CODE_URL' });
  t.throws(() => parseCodeUrl('https://example.org/r.git#a/../b'), { code: 'INVALID_CODE_URL' });
  const parsed = parseCodeUrl('https://example.org/r.git#feature/x');
  t.equal(parsed.branch, 'feature/x');
  t.equal(parsed.url.href, 'https://example.org/r.git');
  t.equal(parseCodeUrl('https://example.org/r.git').branch, undefined);
});

t.test('address classification for the SSRF guard', async (t) => {
  const refused: Record<string, string> = {
    '127.0.0.1': 'loopback',
    '10.1.2.3': 'private',
    '172.16.0.1': 'private',
    '192.168.1.1': 'private',
    '169.254.169.254': 'linkLocal',
    '100.64.0.1': 'carrierGradeNat',
    '0.0.0.0': 'unspecified',
    '::1': 'loopback',
    '::': 'unspecified',
    '0:0:0:0:0:0:0:1': 'loopback',
    'fe80::1': 'linkLocal',
    'fe80::1%eth0': 'linkLocal',
    'febf:ffff::1': 'linkLocal',
    'fd00::1': 'uniqueLocal',
    'fc00::1': 'uniqueLocal',
    'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff': 'uniqueLocal',
    'fec0::1': 'deprecatedSiteLocal',
    'ff02::1': 'multicast',
    '::ffff:127.0.0.1': 'loopback',
    '::FFFF:127.0.0.1': 'loopback',
    '::ffff:7f00:1': 'loopback',
    '0:0:0:0:0:ffff:7f00:0001': 'loopback',
    '::ffff:10.0.0.1': 'private',
    '::ffff:169.254.169.254': 'linkLocal',
    '::ffff:100.64.0.1': 'carrierGradeNat',
    '::ffff:0:127.0.0.1': 'rfc6145',
    '::7f00:1': 'ipv4Compatible',
    '::a00:1': 'ipv4Compatible',
    '64:ff9b::7f00:1': 'rfc6052',
    '2002:7f00:1::': '6to4',
    '2001::1': 'teredo',
    '2001:db8::1': 'reserved',
    '100::1': 'discard',
    '224.0.0.1': 'multicast',
    '255.255.255.255': 'broadcast',
  };
  for (const [address, range] of Object.entries(refused))
    t.equal(classifyAddress(address, false), range, address);
  t.equal(classifyAddress('93.184.216.34', false), null);
  t.equal(classifyAddress('2606:4700::1111', false), null);
  t.equal(classifyAddress('127.0.0.1', true), null, 'loopback allowed by the operator flag');
  t.equal(classifyAddress('::ffff:127.0.0.1', true), null);
  t.equal(classifyAddress('10.0.0.1', true), 'private', 'the flag allows loopback only');
  t.equal(classifyAddress('fd00::1', true), 'uniqueLocal', 'the flag allows loopback only');
  t.equal(classifyAddress('::7f00:1', true), 'ipv4Compatible', 'the flag allows loopback only');
  t.equal(classifyAddress('example.org', false), 'not an IP address');
});
