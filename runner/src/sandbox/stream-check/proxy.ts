// The stream check: a host-side TCP proxy the sandbox's TCP 443, 80 and 53 are diverted to by
// the firewall (TPROXY, scripts/podman/firewall). A container cannot address it: it listens on
// 127.0.0.1, which the firewall drops from the sandbox, and the diverted connection keeps its
// original destination as the accepted socket's local address (TPROXY rewrites nothing), so the
// proxy knows where the client meant to go without SO_ORIGINAL_DST.
// It reads, across any split into segments or records, the first TLS ClientHello (port 443),
// the first HTTP request head (80) or every DNS query (53), refuses a blocked name by resetting
// the client connection, and otherwise connects to the original destination and splices.
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { DnsStreamCheck } from './dns-tcp.ts';
import { readRequestHead } from './http-head.ts';
import { isBlockedName } from './names.ts';
import { readClientHello } from './tls-hello.ts';

export interface Destination {
  address: string;
  port: number;
}

export interface StreamCheckOptions {
  /** Domains refused, each with its subdomains (runner/sandbox-blocked-hosts.txt). */
  domains: readonly string[];
  /** Where the client meant to go; under TPROXY the accepted socket's own address. */
  destinationOf?: (socket: net.Socket) => Destination;
  /** How long a client may take to send its ClientHello or request head. */
  headTimeoutMs?: number;
  /** Told of each refusal (logged by main.ts; counted by the tests). */
  onRefuse?: (destination: Destination, reason: string) => void;
  /** Only for the loopback tests: let connections to loopback through, to another port. */
  allowLoopback?: boolean;
  connectVia?: (destination: Destination) => Destination;
}

const tproxyDestination = (socket: net.Socket): Destination => ({
  address: socket.localAddress ?? '',
  port: socket.localPort ?? 0,
});

/** Destinations the proxy never connects to, whatever the firewall let through (defence in depth). */
function unroutable(address: string, allowLoopback: boolean): boolean {
  if (!ipaddr.isValid(address)) return true;
  const range = ipaddr.process(address).range();
  if (allowLoopback && range === 'loopback') return false;
  return range !== 'unicast';
}

type Verdict = { refuse: string } | { pass: Buffer };

/** The check of the first bytes a client sends on `port`; 'more' until it can decide. */
function firstBytesVerdict(port: number, stream: Buffer, domains: readonly string[]): Verdict | 'more' {
  if (port === 443) {
    const hello = readClientHello(stream);
    if (hello.state === 'more') return 'more';
    if (hello.state === 'bad') return { refuse: hello.reason };
    const blocked = hello.serverNames.find((name) => isBlockedName(name, domains));
    return blocked === undefined ? { pass: stream } : { refuse: `TLS server name ${blocked}` };
  }
  if (port === 80) {
    const head = readRequestHead(stream);
    if (head.state === 'more') return 'more';
    if (head.state === 'bad') return { refuse: head.reason };
    const blocked = head.hosts.find((name) => isBlockedName(name, domains));
    return blocked === undefined
      ? { pass: Buffer.concat([head.head, head.rest]) }
      : { refuse: `HTTP Host ${blocked}` };
  }
  return { refuse: `port ${port} is not checked` };
}

/** Creates the proxy server (not listening yet). */
export function createStreamCheck(options: StreamCheckOptions): net.Server {
  const destinationOf = options.destinationOf ?? tproxyDestination;
  const headTimeoutMs = options.headTimeoutMs ?? 10_000;
  return net.createServer({ pauseOnConnect: false }, (client) => {
    const destination = destinationOf(client);
    const refuse = (reason: string) => {
      options.onRefuse?.(destination, reason);
      client.resetAndDestroy();
    };
    client.on('error', () => client.destroy());
    if (unroutable(destination.address, options.allowLoopback === true)) {
      refuse(`destination ${destination.address} is not on the internet`);
      return;
    }
    const timer = setTimeout(() => refuse('no request in time'), headTimeoutMs);
    client.once('close', () => clearTimeout(timer));
    const dns = destination.port === 53 ? new DnsStreamCheck(options.domains) : undefined;
    let seen = Buffer.alloc(0);
    let upstream: net.Socket | undefined;

    const open = (first: Buffer) => {
      clearTimeout(timer);
      const to = options.connectVia?.(destination) ?? destination;
      const server = net.connect({ host: to.address, port: to.port });
      upstream = server;
      server.on('error', () => client.resetAndDestroy());
      server.on('close', () => client.destroy());
      client.on('close', () => server.destroy());
      if (first.length > 0) server.write(first);
      server.pipe(client);
    };

    const onData = (chunk: Buffer) => {
      if (dns) {
        const verdict = dns.push(chunk);
        if ('refuse' in verdict) return refuse(verdict.refuse);
        if (!upstream) open(verdict.pass);
        else if (verdict.pass.length > 0) upstream.write(verdict.pass);
        return;
      }
      if (upstream) {
        if (!upstream.write(chunk)) {
          client.pause();
          upstream.once('drain', () => client.resume());
        }
        return;
      }
      seen = Buffer.concat([seen, chunk]);
      const verdict = firstBytesVerdict(destination.port, seen, options.domains);
      if (verdict === 'more') return;
      if ('refuse' in verdict) return refuse(verdict.refuse);
      open(verdict.pass);
    };
    client.on('data', onData);
    client.on('end', () => upstream?.end());
  });
}
