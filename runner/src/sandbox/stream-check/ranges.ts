// The IPv4 ranges scripts/podman/firewall drops from the sandbox (besides every address of the
// host itself): private, loopback, link-local (cloud metadata), CGNAT, multicast, reserved.
// The preflight checks a rule for each; the stream check refuses to connect to them.
import ipaddr from 'ipaddr.js';

export const PRIVATE_RANGES = [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10',
  '169.254.0.0/16',
  '127.0.0.0/8',
  '0.0.0.0/8',
  '224.0.0.0/4',
  '240.0.0.0/4',
];

const parsed = PRIVATE_RANGES.map((range) => ipaddr.IPv4.parseCIDR(range));

/** Whether `address` is not an IPv4 address the sandbox may reach. */
export function inDroppedRange(address: string): boolean {
  if (!ipaddr.IPv4.isValidFourPartDecimal(address)) return true;
  const ip = ipaddr.IPv4.parse(address);
  return parsed.some(([range, bits]) => ip.match(range, bits));
}
