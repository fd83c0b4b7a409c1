// The rules scripts/podman/firewall installs for the registry block's stream check, DNS and DNS
// over HTTPS, as the preflight checks them (iptables -C): without them a split name would get
// through, or a scraper could ask any resolver.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { RunnerConfig } from '../../config.ts';

type Rule = [tool: string, table: string, rule: string[]];

const STREAMS_CHAIN = 'CHRONOMAP_STREAMS';
const DNS_CHAIN = 'CHRONOMAP_DNS';
const dohFile = fileURLToPath(new URL('../../../sandbox-doh-addresses.txt', import.meta.url));

/** The addresses of runner/sandbox-doh-addresses.txt. */
async function dohAddresses(): Promise<string[]> {
  return (await readFile(dohFile, 'utf8'))
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** The stream check's redirect, the resolver-only DNS chain and the DoH drops, for `subnets`. */
export async function streamCheckRules(
  config: RunnerConfig,
  subnets: string[],
  registryChain: string,
): Promise<Rule[]> {
  const resolvers = config.dnsServers.filter((server) => !server.includes(':'));
  return [
    ...subnets.map((subnet): Rule => ['iptables', 'nat', ['PREROUTING', '-s', subnet, '-j', STREAMS_CHAIN]]),
    [
      'iptables',
      'nat',
      [
        STREAMS_CHAIN,
        '-p',
        'tcp',
        '-m',
        'multiport',
        '--dports',
        '53,80,443',
        '-j',
        'REDIRECT',
        '--to-ports',
        String(config.streamCheckPort),
      ],
    ],
    ...resolvers.map((resolver): Rule => ['iptables', 'raw', [DNS_CHAIN, '-d', resolver, '-j', 'RETURN']]),
    ['iptables', 'raw', [DNS_CHAIN, '-j', 'DROP']],
    ...['udp', 'tcp'].map((proto): Rule => [
      'iptables',
      'raw',
      [registryChain, '-p', proto, '--dport', '53', '-j', DNS_CHAIN],
    ]),
    ...(await dohAddresses()).map((address): Rule => [
      'iptables',
      'raw',
      [registryChain, '-p', 'tcp', '-d', address, '--dport', '443', '-j', 'DROP'],
    ]),
  ];
}
