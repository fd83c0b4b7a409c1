// The stream check: a host-side TCP proxy the sandbox's TCP 443, 80 and 53 are redirected to by
// the firewall (nat REDIRECT, scripts/podman/firewall). A container cannot address it (the
// firewall drops the sandbox's packets to this host's addresses before nat), and the original
// destination is read back from the connection's conntrack entry (original-destination.ts).
// Connections from outside the sandbox's subnets, or not redirected, are refused.
// It reads, across any split into segments or records, the first TLS ClientHello (port 443),
// the first HTTP request head (80) or every DNS query (53), refuses a blocked name by resetting
// the client connection, and otherwise connects to the original destination and splices.
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { DnsStreamCheck } from './dns-tcp.ts';
import { readRequestHead } from './http-head.ts';
import { isBlockedName } from './names.ts';
import { inDroppedRange } from './ranges.ts';
import { readClientHello } from './tls-hello.ts';

export interface Destination {
  address: string;
  port: number;
}

interface StreamCheckOptions {
  /** Domains refused, each with its subdomains (runner/sandbox-blocked-hosts.txt). */
  domains: readonly string[];
  /** Where the client meant to go (undefined: not a redirected connection). */
  destinationOf: (socket: net.Socket) => Promise<Destination | undefined>;
  /** Only clients from these ranges (the sandbox's subnets, CIDR) are served. */
  sources: readonly string[];
  /** How long a client may take to send its ClientHello or request head. */
  headTimeoutMs?: number;
  /** Told of each refusal (logged by main.ts; counted by the tests). */
  onRefuse?: (destination: Destination, reason: string) => void;
  /** Only for the loopback tests: let connections to loopback through, to another port. */
  allowLoopback?: boolean;
  connectVia?: (destination: Destination) => Destination;
}

/** Destinations the proxy never connects to, whatever the firewall let through (defence in depth). */
function unroutable(address: string, allowLoopback: boolean): boolean {
  if (allowLoopback && address === '127.0.0.1') return false;
  return inDroppedRange(address);
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
  const headTimeoutMs = options.headTimeoutMs ?? 10_000;
  const sources = options.sources.map((cidr) => ipaddr.parseCIDR(cidr));
  const fromSandbox = (address: string | undefined) => {
    if (address === undefined || !ipaddr.isValid(address)) return false;
    const parsed = ipaddr.process(address);
    return sources.some(([range, bits]) => parsed.kind() === range.kind() && parsed.match(range, bits));
  };
  return net.createServer({ pauseOnConnect: true, allowHalfOpen: true }, (client) => {
    client.on('error', () => client.destroy());
    if (!fromSandbox(client.remoteAddress)) {
      client.resetAndDestroy();
      return;
    }
    void options.destinationOf(client).then((destination) => {
      if (client.destroyed) return;
      if (destination === undefined) {
        options.onRefuse?.({ address: '', port: 0 }, 'not a redirected connection');
        client.resetAndDestroy();
        return;
      }
      check(client, destination);
      client.resume();
    });
  });

  function check(client: net.Socket, destination: Destination): void {
    const refuse = (reason: string) => {
      options.onRefuse?.(destination, reason);
      client.resetAndDestroy();
    };
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
      // The server's end ends the client's side through pipe(), after what it sent is flushed.
      client.on('close', () => server.destroy());
      if (first.length > 0) server.write(first);
      server.pipe(client);
      // Past the ClientHello or request head nothing more is read on 443 and 80: the rest is piped
      // without a look at each chunk (DNS stays inspected, every query of the connection).
      if (!dns) {
        client.off('data', onData);
        client.pipe(server);
      }
    };

    const onData = (chunk: Buffer) => {
      if (dns) {
        const verdict = dns.push(chunk);
        if ('refuse' in verdict) return refuse(verdict.refuse);
        if (!upstream) open(verdict.pass);
        else if (verdict.pass.length > 0) upstream.write(verdict.pass);
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
  }
}
