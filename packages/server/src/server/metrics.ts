/**
 * Prometheus metrics (`GET /metrics`, on with the `metrics` option, behind the root credentials): one prom-client
 * registry per server instance, so that several servers in one process (and tests) keep their own counts.
 *
 * Counters and histograms are fed as things happen: HTTP requests by route pattern (never the raw URL), the verifier's
 * observer (DNS queries, SMTP sessions and replies, results, skipped exchangers) and the callback worker. Jobs and
 * entries by state are read from the store at each scrape (one pass over the jobs, none over the entries).
 *
 * Label values are bounded: routes are the registered patterns, methods and statuses are few, and exchangers are named
 * by their registrable domain (`google.com` for `aspmx.l.google.com`, `outlook.com` for every Microsoft 365 tenant's
 * host), the first MAX_EXCHANGER_LABELS of them by name and every later one as "other".
 */
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { getDomain } from 'tldts';
import type { VerifierObserver } from 'mailverify/internal';
import type { JobStatus, JobStore } from '../jobs/types.js';
import type { Authenticator } from './auth.js';
import { forbidden } from './access.js';
import { checkRequestProtection } from './protection.js';
import { content, problem, serverOperation } from './schemas/index.js';

/** Exchangers named in labels; later ones are "other". */
export const MAX_EXCHANGER_LABELS = 50;

const JOB_STATUSES: readonly JobStatus[] = ['InProgress', 'Completed', 'Deleted', 'Expired'];
const CALLBACK_OUTCOMES = ['delivered', 'failed', 'dropped'] as const;
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Seconds: from a cached answer on the same host to a request that waits for a job (up to 2 minutes). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Seconds: a resolver on the same network, to the 5 s cap and past it. */
const DNS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: a fast exchanger, a slow one, a tarpit (up to the Extreme level's 120 s timeout). */
const SMTP_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export class ServerMetrics {
  readonly registry = new Registry();
  /** Feeds the verifier's counters; combined with the server's other observers. */
  readonly observer: VerifierObserver;
  private readonly exchangers = new Set<string>();
  private readonly providers = new Set<string>();

  private readonly httpRequests = this.counter('mailverify_http_requests_total', 'HTTP requests answered, by route pattern and status code.', ['method', 'route', 'status_code']);
  private readonly httpDuration = new Histogram({
    name: 'mailverify_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });
  private readonly callbacks = this.counter('mailverify_callback_deliveries_total', 'Completion callback tries by outcome: delivered, failed (tried again later) or dropped (given up).', ['outcome']);

  constructor(store: JobStore) {
    new Gauge({
      name: 'mailverify_jobs',
      help: 'Jobs kept in the store, by status.',
      labelNames: ['status'],
      registers: [this.registry],
      async collect() {
        const totals = await store.jobTotals();
        for (const status of JOB_STATUSES) this.set({ status }, totals.find((t) => t.status === status)?.jobs ?? 0);
      },
    });
    new Gauge({
      name: 'mailverify_job_entries',
      help: 'Entries of the jobs kept: pending (no result yet) or completed.',
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        let pending = 0;
        let completed = 0;
        for (const totals of await store.jobTotals()) {
          if (totals.status !== 'InProgress' && totals.status !== 'Completed') continue;
          pending += totals.entries - totals.completedEntries;
          completed += totals.completedEntries;
        }
        this.set({ state: 'pending' }, pending);
        this.set({ state: 'completed' }, completed);
      },
    });
    this.observer = this.verifierObserver();
    // Series that exist from the start, so that a rate over them is 0 rather than absent.
    for (const outcome of CALLBACK_OUTCOMES) this.callbacks.inc({ outcome }, 0);
  }

  /** Counts every request the routes of `app` (and its child plugins) answer. Call before registering them. */
  /**
   * The work queue of a cluster, read at each scrape: its tasks by state (waiting, prioritized, delayed until a later
   * pass, active). A queue that keeps growing wants more workers; delayed tasks are passes waiting for their time.
   */
  queueTasks(counts: () => Promise<Record<string, number>>): void {
    new Gauge({
      name: 'mailverify_queue_tasks',
      help: 'Tasks of the cluster work queue, by state.',
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        for (const [state, count] of Object.entries(await counts())) this.set({ state }, count);
      },
    });
  }

  instrument(app: FastifyInstance): void {
    app.addHook('onResponse', (request, reply, done) => {
      const labels = {
        method: HTTP_METHODS.has(request.method) ? request.method : 'other',
        // The not-found handler has no route: every unknown path shares one label.
        route: request.routeOptions.url ?? '(unmatched)',
        status_code: String(reply.statusCode),
      };
      this.httpRequests.inc(labels);
      this.httpDuration.observe(labels, reply.elapsedTime / 1000);
      done();
    });
  }

  /** The callback worker's `onOutcome`. */
  readonly callbackOutcome = (outcome: (typeof CALLBACK_OUTCOMES)[number]): void => {
    this.callbacks.inc({ outcome });
  };

  /** GET `${prefix}/metrics`: the exposition text, for the root credentials (Basic or bearer) only. */
  route(app: FastifyInstance, prefix: string, auth: Authenticator): void {
    const schema = serverOperation(
      {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics (with --metrics), for root and administrators',
        security: [{ basicAuth: [] }, { bearerAuth: [] }],
      },
      {
        200: content('The metrics in the Prometheus text exposition format.', { 'text/plain': { type: 'string' } }),
        401: problem('Missing or wrong credentials.', { 'WWW-Authenticate': { type: 'string' } }),
        403: problem('The caller is neither root nor an administrator, or its firewall does not admit the client\'s address.'),
      },
    );
    app.get(`${prefix}/metrics`, { schema }, async (request, reply) => {
      const caller = await auth.authenticate(request);
      checkRequestProtection(request, reply, caller);
      // The server's own figures, across every user: root's and administrators'.
      if (!caller.isRoot && caller.user?.detail.type !== 'Administrator') throw forbidden('The metrics are for root and administrators.');
      const text = await this.registry.metrics();
      return reply.header('cache-control', 'no-store').type(this.registry.contentType).send(text);
    });
  }

  private verifierObserver(): VerifierObserver {
    const verdicts = this.counter('mailverify_verdicts_total', 'Addresses verified, by status and classification.', ['status', 'classification']);
    const dnsQueries = this.counter('mailverify_dns_queries_total', 'DNS queries sent, by record type and outcome.', ['type', 'outcome']);
    const dnsDuration = new Histogram({
      name: 'mailverify_dns_query_duration_seconds',
      help: 'Time to the answer (or failure) of a DNS query, by record type.',
      labelNames: ['type'],
      buckets: DNS_BUCKETS,
      registers: [this.registry],
    });
    const skipped = this.counter('mailverify_exchangers_skipped_total', 'Mail exchangers left out because they resolve only to non-global addresses.', []);
    const sessions = this.counter('mailverify_smtp_sessions_total', 'SMTP sessions by exchanger and outcome: opened, or failed to open.', ['exchanger', 'outcome']);
    const open = new Gauge({
      name: 'mailverify_smtp_connections_open',
      help: 'SMTP connections open now, by exchanger.',
      labelNames: ['exchanger'],
      registers: [this.registry],
    });
    const replies = new Histogram({
      name: 'mailverify_smtp_reply_duration_seconds',
      help: 'Time from a command (MAIL, RCPT, RSET) to its reply, by exchanger and command.',
      labelNames: ['exchanger', 'command'],
      buckets: SMTP_BUCKETS,
      registers: [this.registry],
    });
    const cooling = this.counter('mailverify_egress_cooling', 'Coolings of an egress × provider after a reply about the prober (a 421, a blocklist, a rate limit).', ['egress', 'provider']);
    return {
      egressCooling: ({ egress, provider }) => cooling.inc({ egress, provider: this.bounded(this.providers, provider) }),
      verdict: ({ status, classification }) => verdicts.inc({ status, classification }),
      dnsQuery: ({ type, outcome, durationMs }) => {
        dnsQueries.inc({ type, outcome });
        dnsDuration.observe({ type }, durationMs / 1000);
      },
      exchangerSkipped: () => skipped.inc(),
      smtpSession: ({ event, exchanger }) => {
        const label = this.exchangerLabel(exchanger);
        if (event === 'close') return open.dec({ exchanger: label });
        sessions.inc({ exchanger: label, outcome: event === 'open' ? 'opened' : 'failed' });
        if (event === 'open') open.inc({ exchanger: label });
      },
      smtpReply: ({ exchanger, phase, latencyMs }) => replies.observe({ exchanger: this.exchangerLabel(exchanger), command: phase }, latencyMs / 1000),
    };
  }

  /** The exchanger's registrable domain while labels remain, else "other"; an address literal is "address-literal". */
  private exchangerLabel(host: string): string {
    if (host === '') return 'address-literal';
    return this.bounded(this.exchangers, getDomain(host) ?? host);
  }

  /** A label value kept while the set of them is under its bound, else "other" (a provider may be any exchanger). */
  private bounded(seen: Set<string>, value: string): string {
    if (seen.has(value)) return value;
    if (seen.size >= MAX_EXCHANGER_LABELS) return 'other';
    seen.add(value);
    return value;
  }

  private counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }
}
