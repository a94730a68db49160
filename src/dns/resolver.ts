/**
 * The resolver interface through which every DNS query goes, and its default adaptor on `node:dns`.
 *
 * The interface has the shape of Node's own `dns.promises.Resolver`, so an instance of it (or any object with these
 * three methods) can be passed as is. A failed query rejects with an error whose `code` is one of Node's DNS error
 * codes (`ENOTFOUND`, `ENODATA`, `ESERVFAIL`, `EREFUSED`, `ETIMEOUT`, `ECONNREFUSED`, ...).
 */
import { promises as dns } from 'node:dns';

export interface MxRecord {
  exchange: string;
  priority: number;
}

export interface AddressRecord {
  address: string;
  /** Seconds. */
  ttl: number;
}

export interface Resolver {
  resolveMx(hostname: string): Promise<MxRecord[]>;
  resolve4(hostname: string, options: { ttl: true }): Promise<AddressRecord[]>;
  resolve6(hostname: string, options: { ttl: true }): Promise<AddressRecord[]>;
}

export interface NodeResolverOptions {
  /** DNS servers as `ip` or `ip:port` (`[ipv6]:port`); default: the system's. */
  servers?: readonly string[];
  /** A hard cap on each query, in milliseconds (default 5000). */
  timeoutMs?: number;
}

/** An error like the ones `node:dns` rejects with. */
export function dnsError(code: string, syscall: string, hostname: string): Error & { code: string } {
  return Object.assign(new Error(`${syscall} ${code} ${hostname}`), { code, syscall, hostname });
}

/**
 * The default resolver. Node's c-ares channel doubles its timeout on each retry (four tries by default), so a
 * query is made with one try and the timeout, and also raced against a deadline of our own: a query never takes
 * longer than `timeoutMs`.
 */
export function createNodeResolver(options: NodeResolverOptions = {}): Resolver {
  const timeoutMs = options.timeoutMs ?? 5000;
  const resolver = new dns.Resolver({ timeout: timeoutMs, tries: 1 });
  if (options.servers !== undefined && options.servers.length > 0) resolver.setServers([...options.servers]);

  function withDeadline<T>(syscall: string, hostname: string, query: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(dnsError('ETIMEOUT', syscall, hostname)), timeoutMs);
      query.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  return {
    resolveMx: (hostname) => withDeadline('queryMx', hostname, resolver.resolveMx(hostname)),
    resolve4: (hostname) => withDeadline('queryA', hostname, resolver.resolve4(hostname, { ttl: true })),
    resolve6: (hostname) => withDeadline('queryAaaa', hostname, resolver.resolve6(hostname, { ttl: true })),
  };
}
