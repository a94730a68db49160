/**
 * Observation hooks (docs/verification.md#observing-the-engine): what the engine does, told to a host application
 * (metrics, log warnings, a summary's hints) without the engine knowing who listens.
 *
 * Every method is optional and is called synchronously, as the thing happens. A method that is absent costs nothing:
 * its event is not even built. A method that throws, or returns a promise that rejects, never changes a result: the
 * error is caught, and the first one is reported once as a process warning (`MAILVERIFY_OBSERVER`).
 */
import type { DnsQueryEvent } from '../dns/lookup.js';
import type { ExchangerSkippedEvent } from '../domain/mail-domain.js';
import type { EgressCoolingEvent, SmtpReplyEvent, SmtpSessionEvent } from '../smtp/prober.js';
import type { StatusCode } from '../status/catalogue.js';

export type { DnsQueryEvent, DnsQueryOutcome, DnsRecordType } from '../dns/lookup.js';
export type { ExchangerSkippedEvent } from '../domain/mail-domain.js';
export type { EgressCoolingEvent, SmtpReplyEvent, SmtpSessionEvent } from '../smtp/prober.js';

/** An address got its result (one per entry a batch yields, duplicates included). */
export interface VerdictEvent {
  readonly status: StatusCode;
  readonly classification: string;
}

export interface VerifierObserver {
  /** A DNS query was answered or failed. Cache hits send no query; a retried query is two. */
  dnsQuery?(event: DnsQueryEvent): void;
  /** A mail exchanger was left out because it resolves only to non-global addresses (see `allowPrivateAddresses`). */
  exchangerSkipped?(event: ExchangerSkippedEvent): void;
  /** An SMTP session was opened, could not be opened, or closed. */
  smtpSession?(event: SmtpSessionEvent): void;
  /** A reply to MAIL FROM, RCPT TO or RSET arrived. */
  smtpReply?(event: SmtpReplyEvent): void;
  /** An address got its result. */
  verdict?(event: VerdictEvent): void;
  /**
   * A reply about the prober put an egress × provider into cooling (docs/egress.md#back-off). Without this method,
   * each cooling is a process warning (`MAILVERIFY_EGRESS_COOLING`).
   */
  egressCooling?(event: EgressCoolingEvent): void;
}

/** The observer's method names, for option checks. */
export const OBSERVER_METHODS = ['dnsQuery', 'exchangerSkipped', 'smtpSession', 'smtpReply', 'verdict', 'egressCooling'] as const;

type Method = (typeof OBSERVER_METHODS)[number];
type EventOf<M extends Method> = Parameters<NonNullable<VerifierObserver[M]>>[0];

/** The observer as the engine calls it: each method present is a function that cannot throw; absent ones undefined. */
export type Observe = { readonly [M in Method]?: (event: EventOf<M>) => void };

/** The methods of `observer` that it has, each guarded against its own errors. */
export function guardObserver(observer: VerifierObserver | undefined): Observe {
  if (observer === undefined) return {};
  let reported = false;
  const report = (method: string, error: unknown): void => {
    if (reported) return;
    reported = true;
    const message = error instanceof Error ? error.message : String(error);
    process.emitWarning(`the verifier's observer failed in ${method} (later failures are not reported): ${message}`, {
      code: 'MAILVERIFY_OBSERVER',
    });
  };
  const observe: Partial<Record<Method, (event: unknown) => void>> = {};
  for (const method of OBSERVER_METHODS) {
    const call = observer[method] as ((event: unknown) => unknown) | undefined;
    if (call === undefined) continue;
    observe[method] = (event) => {
      try {
        const result = call.call(observer, event);
        if (typeof (result as Promise<unknown> | undefined)?.then === 'function') {
          (result as Promise<unknown>).then(undefined, (error: unknown) => report(method, error));
        }
      } catch (error) {
        report(method, error);
      }
    };
  }
  return observe as Observe;
}

/** One observer that tells every given one, in order (undefined ones are left out). */
export function combineObservers(...observers: ReadonlyArray<VerifierObserver | undefined>): VerifierObserver {
  const present = observers.filter((observer) => observer !== undefined);
  // Each one is guarded on its own, so that one that throws does not keep the event from the others.
  const guarded = present.map((observer) => guardObserver(observer) as Partial<Record<Method, (event: unknown) => void>>);
  const combined: Partial<Record<Method, (event: unknown) => void>> = {};
  for (const method of OBSERVER_METHODS) {
    const calls = guarded.flatMap((observe) => (observe[method] === undefined ? [] : [observe[method]]));
    if (calls.length === 0) continue;
    combined[method] = (event) => {
      for (const call of calls) call(event);
    };
  }
  return combined as VerifierObserver;
}

/** The `observer` option checked: an object whose methods, where present, are functions. */
export function checkObserver(observer: unknown): void {
  if (observer === undefined) return;
  if (typeof observer !== 'object' || observer === null || Array.isArray(observer)) {
    throw new TypeError(`createVerifier: option observer must be an object, got ${JSON.stringify(observer) ?? String(observer)}`);
  }
  for (const method of OBSERVER_METHODS) {
    const value = (observer as Record<string, unknown>)[method];
    if (value !== undefined && typeof value !== 'function') {
      throw new TypeError(`createVerifier: option observer.${method} must be a function, got ${JSON.stringify(value) ?? String(value)}`);
    }
  }
}
