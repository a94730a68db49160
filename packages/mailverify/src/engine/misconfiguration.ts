/**
 * Warnings for setups that give confident but wrong results with nothing pointing at the cause: DNS servers that
 * cannot be reached (every address gets DnsConnectionFailure or DnsQueryTimeout), and mail exchangers skipped for
 * their non-global addresses (their domains get DomainIsMisconfigured). Built on the verifier's observer; the server
 * logs the warnings, `mailverify check` adds hints to its summary. Each cause is warned of at once, then at most once
 * per interval while it lasts.
 */
import type { DnsQueryEvent, ExchangerSkippedEvent, VerifierObserver } from './observer.js';

export type MisconfigurationCause = 'dns-unreachable' | 'non-global-exchangers';

export interface MisconfigurationWarning {
  readonly cause: MisconfigurationCause;
  readonly message: string;
}

export interface MisconfigurationOptions {
  readonly warn: (warning: MisconfigurationWarning) => void;
  /** DNS queries in a row without an answer from any server before the warning (default 10). */
  readonly dnsFailureRun?: number;
  /** The least time between two warnings of one cause (default 1 hour). */
  readonly intervalMs?: number;
  /** Milliseconds, for the interval (default `Date.now`). */
  readonly now?: () => number;
}

/** Queries in a row that got no answer at all: a lost server, not names that fail (those do get answers). */
const DEFAULT_DNS_FAILURE_RUN = 10;
const DEFAULT_INTERVAL_MS = 3_600_000;

/** The DNS servers of an event, or what stands for them with a resolver of the host application's. */
export function describeDnsServers(servers: readonly string[] | undefined): string {
  return servers === undefined || servers.length === 0 ? 'the resolver' : `the DNS server(s) ${servers.join(', ')}`;
}

/** `example.com: mx.example.com → 10.0.0.5, fd00::5` (`example.com → 10.0.0.5` for the implicit MX). */
export function describeSkippedExchanger(event: ExchangerSkippedEvent): string {
  const exchanger = event.exchanger === event.domain ? '' : `: ${event.exchanger}`;
  return `${event.domain}${exchanger} → ${event.addresses.join(', ')}`;
}

export class MisconfigurationMonitor implements VerifierObserver {
  private readonly run: number;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly lastWarned = new Map<MisconfigurationCause, number>();
  /** Queries in a row without an answer, their error codes, and the servers asked. */
  private failedQueries = 0;
  private readonly failureCodes = new Set<string>();
  private servers: readonly string[] | undefined;
  /** Exchangers skipped since the last warning. */
  private skipped = 0;

  constructor(private readonly options: MisconfigurationOptions) {
    this.run = options.dnsFailureRun ?? DEFAULT_DNS_FAILURE_RUN;
    this.intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.now = options.now ?? Date.now;
  }

  dnsQuery(event: DnsQueryEvent): void {
    if (event.outcome !== 'unreachable' && event.outcome !== 'timeout') {
      this.failedQueries = 0;
      this.failureCodes.clear();
      return;
    }
    this.failedQueries++;
    if (event.code !== undefined) this.failureCodes.add(event.code);
    this.servers = event.servers;
    if (this.failedQueries < this.run || !this.due('dns-unreachable')) return;
    this.options.warn({
      cause: 'dns-unreachable',
      message:
        `${this.failedQueries} DNS queries in a row got no answer (${[...this.failureCodes].join(', ')}) from ` +
        `${describeDnsServers(this.servers)}, so addresses get DnsConnectionFailure or DnsQueryTimeout whatever they ` +
        'are. Check that this host can reach the server (a firewall, a resolver that is down, a wrong address), or ' +
        'name another with --dns-server (option dns.servers).',
    });
  }

  exchangerSkipped(event: ExchangerSkippedEvent): void {
    this.skipped++;
    if (!this.due('non-global-exchangers')) return;
    const others = this.skipped - 1;
    this.skipped = 0;
    this.options.warn({
      cause: 'non-global-exchangers',
      message:
        `Skipped a mail exchanger that resolves only to non-global addresses (${describeSkippedExchanger(event)})` +
        `${others > 0 ? `, and ${others} more since the last warning` : ''}; ` +
        'a domain with no other exchanger gets DomainIsMisconfigured. If such exchangers are meant to be reached (an ' +
        'internal network, a test setup), allow them with --allow-private-addresses (option allowPrivateAddresses).',
    });
  }

  /** Whether a warning of `cause` may be given now; if so, its time is noted. */
  private due(cause: MisconfigurationCause): boolean {
    const now = this.now();
    const last = this.lastWarned.get(cause);
    if (last !== undefined && now - last < this.intervalMs) return false;
    this.lastWarned.set(cause, now);
    return true;
  }
}
