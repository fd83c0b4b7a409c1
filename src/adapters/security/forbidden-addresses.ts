import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// The addresses user-supplied URLs must not reach (private, loopback, link-local, shared, multicast,
// documentation and reserved ranges): one list for the scheduled-import fetcher and the scraper git
// reader, so a range added for one protects both. ipaddr.js (the runner's guard uses it too) names
// the special ranges, and an IPv6 address that carries an IPv4 one (IPv4-mapped and -compatible,
// IPv4-translated, 6to4, Teredo, NAT64) is judged by the IPv4 address it carries: `[::127.0.0.1]`
// and `[2002:7f00:1::1]` reach 127.0.0.1 (issue 30 §7).

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** IPv6 ranges whose addresses carry an IPv4 address (ipaddr.js's names). */
const CARRIES_IPV4 = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo']);

/** The IPv4 addresses an IPv6 address of CARRIES_IPV4 carries. */
function carriedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
  switch (address.range()) {
    // 2002:AABB:CCDD::/48: the 6to4 router's address.
    case '6to4':
      return [v4(p[1] ?? 0, p[2] ?? 0)];
    // 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC: the Teredo server, and the client's address inverted.
    case 'teredo':
      return [v4(p[2] ?? 0, p[3] ?? 0), v4(~(p[6] ?? 0) & 0xffff, ~(p[7] ?? 0) & 0xffff)];
    // Mapped, compatible, translated and NAT64 (/96) addresses: the last 32 bits.
    default:
      return [v4(p[6] ?? 0, p[7] ?? 0)];
  }
}

function forbiddenIPv4(address: ipaddr.IPv4): boolean {
  return address.range() !== 'unicast' || blocked.check(address.toString(), 'ipv4');
}

/** Whether an address is off limits for fetches of user-supplied URLs. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return forbiddenIPv4(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  if (blocked.check(address, 'ipv6')) return true;
  if (CARRIES_IPV4.has(v6.range())) return carriedIPv4(v6).some(forbiddenIPv4);
  return v6.range() !== 'unicast';
}
