// SSRF guard for code_url: the git host must resolve only to public unicast addresses, so a
// scraper definition cannot make the runner fetch from the operator's own network.
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { RunnerError } from '../errors.ts';

/** Why an address is refused, or null when it is a public unicast address. */
export function classifyAddress(address: string, allowLoopback: boolean): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  let parsed = ipaddr.parse(address);
  // ::ffff:127.0.0.1 and friends are IPv4 addresses in disguise: judge the IPv4 inside.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  // ::a.b.c.d (IPv4-compatible, deprecated; ::/96): ipaddr.js calls it unicast, but it is no
  // public host's address, and on some stacks it reaches the IPv4 address inside.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0))
    return range === 'unicast' ? 'ipv4Compatible' : range;
  if (range === 'unicast') return null;
  if (range === 'loopback' && allowLoopback) return null;
  return range; // private, loopback, linkLocal, carrierGradeNat, uniqueLocal, reserved, 6to4, ...
}

export interface ResolvedHost {
  host: string;
  /** The address git is pinned to, so DNS cannot change between this check and the clone. */
  address: string;
}

export async function resolvePublicHost(host: string, allowLoopback: boolean): Promise<ResolvedHost> {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  let addresses: string[];
  if (ipaddr.isValid(bare)) {
    addresses = [bare];
  } else {
    try {
      addresses = (await lookup(bare, { all: true, verbatim: true })).map((a) => a.address);
    } catch (err) {
      throw new RunnerError(
        400,
        'CODE_URL_UNRESOLVABLE',
        `cannot resolve host ${bare}: ${(err as Error).message}`,
      );
    }
  }
  for (const address of addresses) {
    const reason = classifyAddress(address, allowLoopback);
    if (reason !== null) {
      throw new RunnerError(
        400,
        'CODE_URL_FORBIDDEN',
        `code_url host ${bare} resolves to ${address} (${reason}); only public addresses are allowed`,
      );
    }
  }
  const first = addresses[0];
  if (first === undefined) throw new RunnerError(400, 'CODE_URL_UNRESOLVABLE', `host ${bare} has no address`);
  return { host: bare, address: first };
}
