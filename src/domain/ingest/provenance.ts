// Provenance of imported events (issue 38 §5): what an ingest file was made from, and the one rule
// that keeps a URL's secrets out of it (redactSourceUrl; docs/rules.md).

/** What an ingest file was made from, recorded with it (migration 0890). */
export type FileOrigin = {
  /** Hex SHA-256 of the bytes as the FileStore wrote them. */
  sha256: string;
  /** A URL import's: the URL as redactSourceUrl left it, when it was fetched, the server's validators. */
  url?: { address: string; fetchedAt: string; etag: string | null; lastModified: string | null };
};

/** What replaces a secret in a source URL. */
export const REDACTED = 'REDACTED';

/**
 * Query parameter names whose value is taken for a secret: any name containing one of these words
 * (case-insensitive), e.g. `token`, `access_token`, `api_key`, `apikey`, `X-Amz-Signature`, `sig`.
 */
const SECRET_PARAMETER = /token|key|secret|passw|pwd|auth|sig|credential|session|code|ticket|private/i;

/**
 * The URL of a URL import as provenance shows it: user name and password replaced by REDACTED, the
 * value of every secret-looking query parameter (SECRET_PARAMETER) too, and the fragment dropped.
 * A secret in the path (/token/abc/) cannot be told from a name and stays: docs/ingestion.md says so.
 * The rest (scheme, host, port, path, other parameters) stays as it was. Text that is not a URL
 * becomes REDACTED as a whole: it cannot be told which part of it is a secret.
 */
export function redactSourceUrl(address: string): string {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return REDACTED;
  }
  if (url.username) url.username = REDACTED;
  if (url.password) url.password = REDACTED;
  url.hash = '';
  const query = url.search.slice(1);
  if (query === '') return url.toString();
  // Rebuilt by hand: URLSearchParams would re-encode the parameters the rule leaves alone.
  url.search = query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      if (equals < 0) return pair;
      const name = pair.slice(0, equals);
      return isSecretName(name) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
  return url.toString();
}

function isSecretName(encodedName: string): boolean {
  let name = encodedName;
  try {
    name = decodeURIComponent(encodedName.replaceAll('+', ' '));
  } catch {
    // A malformed escape: judged as written.
  }
  return SECRET_PARAMETER.test(name);
}
