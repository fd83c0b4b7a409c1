// The names the sandbox must not reach (runner/sandbox-blocked-hosts.txt: each domain with every
// subdomain), matched on whole DNS labels and case-insensitively, as the stream check sees them
// in a TLS ClientHello's SNI, an HTTP request's Host or a DNS query over TCP.

/** Whether `name` is one of `domains` or below one of them (pypi.org, files.PYPI.org.). */
export function isBlockedName(name: string, domains: readonly string[]): boolean {
  const host = name.trim().toLowerCase().replace(/\.+$/, '');
  return domains.some((domain) => host === domain || host.endsWith(`.${domain}`));
}

/** `host[:port]` or `[v6]:port` as the bare host. */
export function hostOfAuthority(authority: string): string {
  const value = authority.trim();
  if (value.startsWith('[')) return value.slice(1, value.indexOf(']') > 0 ? value.indexOf(']') : undefined);
  const colon = value.lastIndexOf(':');
  return colon >= 0 && value.indexOf(':') === colon ? value.slice(0, colon) : value;
}
