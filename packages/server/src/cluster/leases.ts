/**
 * Cluster-wide SMTP connection caps: a transport that takes a lease in Redis before each connection (one for the
 * exchanger address, one for its provider through the egress when the provider's profile caps those, one of the
 * cluster's total) and gives them back when the session ends. A lease is a member of a Redis semaphore
 * (redis-semaphore) refreshed while its session is open; the leases of a worker that dies expire after `leaseMs`. So
 * adding workers never multiplies the connections one exchanger sees: each worker's own caps still apply inside these. (The library names its keys `semaphore:<key>`, so these live under `semaphore:mailverify:<prefix>:`.)
 */
import type { Redis } from 'ioredis';
import { SmtpTransportError, type SmtpOpenOptions, type SmtpSession, type SmtpTransport } from 'mailverify/internal';

export interface ConnectionLeaseOptions {
  readonly redis: Redis;
  /** `mailverify:<prefix>:` (redis.ts keyPrefix). */
  readonly keyPrefix: string;
  /** Connections to one exchanger address across the cluster. */
  readonly perExchanger: number;
  /** Connections across the cluster. */
  readonly total: number;
  /** How long a lease outlives a holder that stopped refreshing it (default 30 s). */
  readonly leaseMs?: number;
}

/** How often a lease waiting for a free place asks again. */
const RETRY_MS = 25;
/** How often a held lease checks that its session is still open. */
const SESSION_CHECK_MS = 1_000;

/** `inner`, with every connection it opens counted against the cluster's caps. */
export async function leasedTransport(inner: SmtpTransport, options: ConnectionLeaseOptions): Promise<SmtpTransport> {
  const { Semaphore } = await import('redis-semaphore');
  const leaseMs = options.leaseMs ?? 30_000;
  const lease = (key: string, limit: number) =>
    new Semaphore(options.redis, `${options.keyPrefix}lease:${key}`, limit, {
      lockTimeout: leaseMs,
      refreshInterval: Math.max(100, Math.floor(leaseMs / 3)),
      // Waits as long as it takes: the prober's own timeouts and the session's signal bound it.
      acquireTimeout: 24 * 3_600_000,
      acquireAttemptsLimit: Number.POSITIVE_INFINITY,
      retryInterval: RETRY_MS,
      // A lease lost (Redis flushed or restarted) leaves its session to finish: the cap is loose until the sessions
      // opened before end, rather than every session being cut. (The library's default throws, out of any caller.)
      onLockLost: () => {},
    });
  return {
    async open(openOptions: SmtpOpenOptions): Promise<SmtpSession> {
      // The exchanger's place first, then the provider's through this egress, then the total's: no place of the
      // total is held while waiting for a busy exchanger.
      const semaphores = [lease(`mx:${openOptions.host}`, options.perExchanger)];
      const { provider, egress } = openOptions;
      if (provider?.maxConnectionsPerEgress !== undefined) {
        semaphores.push(lease(`provider:${egress?.id ?? 'default'}:${provider.id}`, provider.maxConnectionsPerEgress));
      }
      semaphores.push(lease('total', options.total));
      const held: InstanceType<typeof Semaphore>[] = [];
      const releaseAll = (): void => {
        for (const semaphore of held.splice(0)) semaphore.release().catch(() => {});
      };
      try {
        for (const semaphore of semaphores) {
          await semaphore.acquire(openOptions.signal);
          held.push(semaphore);
        }
      } catch (error) {
        releaseAll();
        if (error instanceof SmtpTransportError) throw error;
        throw new SmtpTransportError('ECLOSED', 'connect', openOptions.signal?.aborted === true ? 'the connection was withdrawn while waiting for a cluster lease' : `no cluster lease: ${(error as Error).message}`);
      }
      let session: SmtpSession;
      try {
        session = await inner.open(openOptions);
      } catch (error) {
        releaseAll();
        throw error;
      }
      return leasedSession(session, releaseAll);
    },
  };
}

/** The session, giving its leases back once it ends (quit, close, or closed by the server). */
function leasedSession(session: SmtpSession, release: () => void): SmtpSession {
  let released = false;
  const done = (): void => {
    if (released) return;
    released = true;
    clearInterval(check);
    release();
  };
  const check = setInterval(() => session.closed && done(), SESSION_CHECK_MS);
  check.unref();
  return {
    get greeting() {
      return session.greeting;
    },
    get extensions() {
      return session.extensions;
    },
    get secure() {
      return session.secure;
    },
    get closed() {
      return session.closed;
    },
    get failure() {
      return session.failure;
    },
    mail: (from, parameters, commandOptions) => session.mail(from, parameters, commandOptions),
    rcpt: (to, commandOptions) => session.rcpt(to, commandOptions),
    rset: (commandOptions) => session.rset(commandOptions),
    quit: async () => {
      try {
        await session.quit();
      } finally {
        done();
      }
    },
    close: () => {
      session.close();
      done();
    },
  };
}
