import t from 'tap';
import { REDACTED, redactSourceUrl } from '../../../../src/domain/ingest/provenance.ts';

// redactSourceUrl: what a URL import's provenance shows of its URL.

t.test('user name and password are redacted, the rest kept', async (t) => {
  t.equal(
    redactSourceUrl('https://reader:pa55@data.example.org:8443/feeds/events.csv'),
    `https://${REDACTED}:${REDACTED}@data.example.org:8443/feeds/events.csv`,
  );
  t.equal(redactSourceUrl('https://token-only@example.org/x.csv'), `https://${REDACTED}@example.org/x.csv`);
  t.equal(redactSourceUrl('https://example.org/x.csv'), 'https://example.org/x.csv');
});

t.test('secret-looking query parameters lose their value, others stay as written', async (t) => {
  t.equal(
    redactSourceUrl('https://example.org/x.csv?token=abc&page=2&access_token=def&q=a%20b'),
    `https://example.org/x.csv?token=${REDACTED}&page=2&access_token=${REDACTED}&q=a%20b`,
  );
  for (const name of [
    'api_key',
    'apiKey',
    'KEY',
    'secret',
    'client_secret',
    'password',
    'pwd',
    'auth',
    'X-Amz-Signature',
    'sig',
    'X-Amz-Credential',
    'sessionid',
    'code',
    'private_token',
    'ticket',
  ]) {
    t.equal(
      redactSourceUrl(`https://example.org/?${name}=v4lue`),
      `https://example.org/?${name}=${REDACTED}`,
      name,
    );
  }
  t.equal(
    redactSourceUrl('https://example.org/?to%6Ben=v'),
    `https://example.org/?to%6Ben=${REDACTED}`,
    'an encoded name',
  );
  t.equal(
    redactSourceUrl('https://example.org/?token'),
    'https://example.org/?token',
    'a name without a value',
  );
  t.equal(redactSourceUrl('https://example.org/?a=1&&b=2'), 'https://example.org/?a=1&&b=2');
});

t.test('the fragment is dropped; what is not a URL is redacted whole', async (t) => {
  t.equal(redactSourceUrl('https://example.org/x.csv#key=abc'), 'https://example.org/x.csv');
  t.equal(redactSourceUrl('not a url with a s3cret'), REDACTED);
  t.equal(redactSourceUrl(''), REDACTED);
});
