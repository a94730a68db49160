/**
 * The background duties of a store's owner besides running jobs: delivering completion callbacks and purging expired
 * jobs. One process does them (the server when embedded, the elected process in a cluster); made here for both.
 */
import { createDefaultResolver, type VerifierOptions } from 'mailverify/internal';
import { CallbackWorker, DEFAULT_CALLBACK_TIMEOUT_MS } from './callbacks.js';
import type { Clock } from './clock.js';
import { RetentionPurger } from './retention.js';
import { StorageFullError, type JobStore } from './types.js';

export interface DutyOptions {
  readonly store: JobStore;
  /** Callback hosts are resolved as the verifier resolves mail hosts: its resolver, else its DNS servers. */
  readonly verifier?: VerifierOptions;
  readonly callbackTimeoutMs?: number;
  readonly defaultRetentionMs: number;
  readonly clock?: Clock;
  readonly log: {
    warn(message: string, details?: Record<string, unknown>): void;
    error(message: string, details?: Record<string, unknown>): void;
    debug(message: string, details?: Record<string, unknown>): void;
  };
  readonly onCallbackOutcome?: (outcome: 'delivered' | 'failed' | 'dropped') => void;
}

/** A new callback worker and retention purger, not started. */
export function backgroundDuties(options: DutyOptions): { readonly callbacks: CallbackWorker; readonly retention: RetentionPurger } {
  const { store, log } = options;
  const dns = options.verifier?.dns;
  const callbacks = new CallbackWorker({
    store,
    resolver: dns?.resolver ?? createDefaultResolver({ servers: dns?.servers, timeoutMs: dns?.timeoutMs }),
    allowPrivateAddresses: options.verifier?.allowPrivateAddresses === true,
    timeoutMs: options.callbackTimeoutMs ?? DEFAULT_CALLBACK_TIMEOUT_MS,
    ...(options.clock !== undefined && { clock: options.clock }),
    log: (message, details) => log.warn(message, details),
    ...(options.onCallbackOutcome !== undefined && { onOutcome: options.onCallbackOutcome }),
  });
  const retention = new RetentionPurger({
    store,
    defaultRetentionMs: options.defaultRetentionMs,
    ...(options.clock !== undefined && { clock: options.clock }),
    onError: (error) => {
      // A full disk is said once by the store; the next round tries again.
      if (error instanceof StorageFullError) log.debug('mailverify: retention purge refused: the disk is full', { err: error });
      else log.error('mailverify: retention purge failed', { err: error });
    },
  });
  return { callbacks, retention };
}
