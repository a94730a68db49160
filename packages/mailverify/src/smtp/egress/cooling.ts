/**
 * Back-off on replies about the prober rather than the mailbox (docs/egress.md#back-off): such a reply puts the
 * egress × provider it came through into cooling, during which no new connection goes that way. The first cooling
 * lasts a minute; the next one of the same pair twice as long, up to 30 minutes, unless a session on that pair ended
 * without such a reply in between, which brings it back to a minute. A reply while cooling does not extend it.
 */
import { BoundedCache } from '../../cache/bounded-cache.js';
import { pairKey } from './budget.js';
import { enhancedCodeOf } from '../reply.js';
import { firstMatchOfKind } from '../reply-patterns.js';

export const FIRST_COOLDOWN_MS = 60_000;
export const LONGEST_COOLDOWN_MS = 30 * 60_000;

/**
 * Rate wording of replies about the sender's volume (beside the reputation wording of reply-patterns.ts), as the
 * providers write it. Read only in a 4.7.x or 5.7.x reply: Gmail's 4.2.1 "receiving mail at a rate" is about the
 * recipient.
 */
const RATE_WORDING: readonly { readonly pattern: RegExp; readonly source: string }[] = [
  { pattern: /\brate[- ]?limit/iu, source: 'Gmail "421 4.7.28 ... unusual rate of unsolicited mail ... rate limited" (Google Workspace SMTP errors, support.google.com/a/answer/3726730)' },
  { pattern: /\bunusual rate\b|\bsending rate\b|\brate of (?:traffic|mail|email|messages|connections)\b/iu, source: 'Gmail 4.7.28, Yahoo "421 4.7.0 [TSS04] ... unexpected volume or user complaints" (senders.yahooinc.com/smtp-error-codes)' },
  { pattern: /\bthrottl/iu, source: 'Outlook.com and Exchange Online deferrals "4.7.500-699 ... throttled" (Microsoft\'s NDR reference for 451 4.7.500-699)' },
  { pattern: /\btoo many (?:connections|messages|mails|emails|requests|sessions|concurrent)\b/iu, source: 'RFC 5321 §3.8 421 "too many connections" as servers word it (Postfix smtpd_client_connection_count_limit)' },
  { pattern: /\bunexpected volume\b|\bexcessive (?:volume|traffic|connections)\b|\bvolume of (?:mail|email)\b/iu, source: 'Yahoo [TSS04]/[TS01] deferrals (senders.yahooinc.com/smtp-error-codes)' },
  { pattern: /\btemporarily (?:deferred|rate limited|blocked)\b/iu, source: 'Yahoo "421 4.7.0 [TSS04] Messages from x temporarily deferred" (senders.yahooinc.com/smtp-error-codes)' },
];

/**
 * Whether a reply is about the prober (its address, its HELO name, its volume) rather than a mailbox: any 421; a
 * 4.7.x or 5.7.x with rate or reputation wording; 5.7.606–5.7.649 (Exchange Online's banned sending IP);
 * 4.7.650–4.7.651 (Outlook.com's IP reputation deferrals); Gmail's 4.7.28.
 */
export function isAboutProber(reply: { readonly code: number; readonly text: string }): boolean {
  if (reply.code === 421) return true;
  if (reply.code < 400 || reply.code >= 600) return false;
  const enhanced = enhancedCodeOf(reply.code, reply.text);
  if (enhanced === null) return false;
  const [, subject, detail] = enhanced.split('.').map(Number) as [number, number, number];
  if (subject !== 7) return false;
  if (reply.code >= 500 ? detail >= 606 && detail <= 649 : detail === 28 || detail === 650 || detail === 651) return true;
  return firstMatchOfKind('reputation', reply.text) !== null || RATE_WORDING.some(({ pattern }) => pattern.test(reply.text));
}

/** A cooling that began: how long it lasts. */
export interface CoolingStarted {
  readonly cooldownMs: number;
  readonly until: number;
}

interface PairState {
  /** While cooling, when it ends (ms, `now()`'s clock); 0 when not cooling. */
  until: number;
  /** The length of the next cooling of this pair. */
  next: number;
}

/**
 * The cooling state of every egress × provider pair in one process. `now` is injectable for tests of the doubling
 * (the clock of `performance.now()` otherwise).
 */
export class Cooling {
  /** Pairs cooling, or remembering a longer next cooling; bounded (a forgotten pair starts again at a minute). */
  private readonly pairs = new BoundedCache<string, PairState>({ max: 10_000 });

  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * A reply about the prober came through `egress` from `provider`: cooling starts, unless the pair is cooling already
   * (null: nothing changes).
   */
  start(egress: string, provider: string): CoolingStarted | null {
    const key = pairKey(egress, provider);
    const now = this.now();
    const state = this.pairs.get(key) ?? { until: 0, next: FIRST_COOLDOWN_MS };
    if (state.until > now) return null;
    const cooldownMs = state.next;
    state.until = now + cooldownMs;
    state.next = Math.min(cooldownMs * 2, LONGEST_COOLDOWN_MS);
    this.pairs.set(key, state);
    return { cooldownMs, until: state.until };
  }

  /**
   * A session on the pair ended without a reply about the prober: its next cooling is a minute again. True when that
   * changed something (a longer next cooling was remembered).
   */
  clean(egress: string, provider: string): boolean {
    const key = pairKey(egress, provider);
    const state = this.pairs.get(key);
    if (state === undefined || state.until > this.now()) return false;
    this.pairs.delete(key);
    return true;
  }

  /**
   * The pair's state as another process of a cluster made it: cooling for `remainingMs` more (0: not cooling), the
   * next cooling `nextMs` long.
   */
  adopt(egress: string, provider: string, remainingMs: number, nextMs: number): void {
    const key = pairKey(egress, provider);
    if (remainingMs <= 0 && nextMs <= FIRST_COOLDOWN_MS) this.pairs.delete(key);
    else this.pairs.set(key, { until: remainingMs > 0 ? this.now() + remainingMs : 0, next: nextMs });
  }

  /** When the pair's cooling ends, or 0 when it is not cooling. */
  coolingUntil(egress: string, provider: string): number {
    const until = this.pairs.get(pairKey(egress, provider))?.until ?? 0;
    return until > this.now() ? until : 0;
  }

  isCooling(egress: string, provider: string): boolean {
    return this.coolingUntil(egress, provider) !== 0;
  }
}
