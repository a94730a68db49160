/**
 * The resolver interface through which every DNS query goes, and the default resolver.
 *
 * The interface has the shape of Node's own `dns.promises.Resolver`, so an instance of it (or any object with these
 * three methods) can be passed as is. A failed query rejects with an error whose `code` is one of Node's DNS error
 * codes (`ENOTFOUND`, `ENODATA`, `ESERVFAIL`, `EREFUSED`, `ETIMEOUT`, `ECONNREFUSED`, ...).
 */
import { parseServers, StubResolver, systemServers } from './stub-resolver.js';

export { dnsError } from './stub-resolver.js';

export interface MxRecord {
  exchange: string;
  priority: number;
  /**
   * Seconds the record may be cached. Node's resolver does not report it (the record is then cached for the cache's
   * longest time); the default resolver does, and a TTL of 0 is then never served from the cache.
   */
  ttl?: number;
}

export interface AddressRecord {
  address: string;
  /** Seconds. */
  ttl: number;
}

/**
 * `signal` aborts a query whose answer nobody waits for any more (its batch was aborted): the built-in resolver then
 * closes its socket and clears its timers at once. A resolver that ignores it (Node's) lets the query run out.
 */
export interface Resolver {
  resolveMx(hostname: string, options?: { signal?: AbortSignal }): Promise<MxRecord[]>;
  resolve4(hostname: string, options: { ttl: true; signal?: AbortSignal }): Promise<AddressRecord[]>;
  resolve6(hostname: string, options: { ttl: true; signal?: AbortSignal }): Promise<AddressRecord[]>;
}

export interface DefaultResolverOptions {
  /** DNS servers as `ip` or `ip:port` (`[ipv6]:port`); default: the system's (`dns.getServers()`). */
  servers?: readonly string[];
  /** A hard cap on each query, retransmissions and TCP included, in milliseconds (default 5000). */
  timeoutMs?: number;
}

/** The built-in resolver, and the servers it asks. */
export interface DefaultResolver extends Resolver {
  /** `ip:port` (`[ipv6]:port`), in the order they are asked. */
  readonly servers: readonly string[];
  /** The names a PTR query answers (`5.113.0.203.in-addr.arpa`), without their trailing dot, as `node:dns` gives them. */
  resolvePtr(hostname: string, options?: { signal?: AbortSignal }): Promise<string[]>;
  /** The TXT records of a name, each as its character-strings (RFC 1035 §3.3.14), as `node:dns` gives them. */
  resolveTxt(hostname: string, options?: { signal?: AbortSignal }): Promise<string[][]>;
  /**
   * Closes the UDP sockets it keeps between queries (they never keep the process alive); a query still under way
   * fails with ECANCELLED. Later queries open new sockets.
   */
  close(): Promise<void>;
}

/**
 * The default resolver: the stub resolver of `stub-resolver.ts`, which retransmits a lost datagram within the
 * deadline and reports the TTL of every record, MX included. Throws a TypeError for a server it cannot read.
 */
export function createDefaultResolver(options: DefaultResolverOptions = {}): DefaultResolver {
  const timeoutMs = options.timeoutMs ?? 5000;
  const servers = options.servers !== undefined && options.servers.length > 0 ? parseServers(options.servers) : systemServers();
  const stub = new StubResolver(servers, timeoutMs);
  return {
    servers: servers.map(({ host, port }) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`)),
    close: () => stub.close(),
    async resolveMx(hostname, options) {
      const { answers } = await stub.query(hostname, 'MX', 'queryMx', options?.signal);
      return answers.map(({ data, ttl }) => {
        const { preference, exchange } = data as { preference?: number; exchange: string };
        // The root (RFC 7505 null MX, `MX 0 .`) reads as '' as in Node; other names lose their trailing dot.
        return { exchange: exchange === '.' ? '' : exchange.replace(/\.$/, ''), priority: preference ?? 0, ttl };
      });
    },
    async resolvePtr(hostname, options) {
      const { answers } = await stub.query(hostname, 'PTR', 'queryPtr', options?.signal);
      return answers.map(({ data }) => (data as string).replace(/\.$/, ''));
    },
    async resolveTxt(hostname, options) {
      const { answers } = await stub.query(hostname, 'TXT', 'queryTxt', options?.signal);
      // dns-packet gives the character-strings as Buffers (one string when there is only one).
      return answers.map(({ data }) => (Array.isArray(data) ? data : [data]).map((part) => Buffer.from(part as Buffer | string).toString('utf8')));
    },
    async resolve4(hostname, options) {
      const { answers } = await stub.query(hostname, 'A', 'queryA', options?.signal);
      return answers.map(({ data, ttl }) => ({ address: data as string, ttl }));
    },
    async resolve6(hostname, options) {
      const { answers } = await stub.query(hostname, 'AAAA', 'queryAaaa', options?.signal);
      return answers.map(({ data, ttl }) => ({ address: data as string, ttl }));
    },
  };
}

