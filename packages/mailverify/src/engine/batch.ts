/**
 * A batch (docs/verification.md#batches): the input is read ahead into a bounded window; the offline stages run at once
 * as each address is read; the network stages run for every address of the window together, so that DNS answers are
 * shared and the SMTP stage finds every waiting recipient of an exchanger when it opens a session there (the prober
 * groups them). Transient results wait for their next pass on a timer of their own while the rest of the list goes on.
 * Entries leave as they finish, or in input order when asked.
 */
import { DEDUPLICATION_MODES, deduplicationKey, type Deduplication } from './dedupe.js';
import { makeEntry, type Entry } from './entry.js';
import { typoSuggestions } from './offline.js';
import { checkOptionNames, type OptionNames } from '../options/names.js';
import { networkStages, offlineStages, type Flags, type NetworkOutcome, type StageContext } from './stages.js';
import type { Evidence } from './evidence.js';
import type { ProbeOwner, ProbeTimeouts } from '../smtp/prober.js';
import { checkQuality, type Quality, type QualityLevel } from './quality.js';
import { checkOverrideRules, compileOverrides, type OverrideMatcher, type OverrideRule } from './overrides.js';
import type { StatusCode } from '../status/catalogue.js';
import type { Suggester } from '../suggest/suggest.js';
import { parseWithPositions } from '../syntax/parse.js';
import type { SyntaxPolicy } from '../syntax/policy.js';
import type { ParsedAddress } from '../syntax/types.js';
import { nextTurn } from './turns.js';

/** A batch input: an address, or an address with the submitter's custom data, returned in its entry. */
export type BatchInput = string | { inputData: string; custom?: string };

/**
 * Marks an input answered before (a job resumed after a restart): it yields nothing, counts as completed, and takes
 * part in duplicate marking as a first occurrence with the classification of the entry it carries. Internal to the
 * package (the job runner); not part of the public input type.
 */
export const SETTLED = Symbol('settled');
export interface SettledInput {
  readonly inputData: string;
  readonly [SETTLED]: Entry;
}

export interface BatchProgress {
  /** Addresses with their result. */
  completed: number;
  /** Addresses in the input, once known (an array's length at once; an iterable's when it is exhausted). */
  total?: number;
  /** completed / total, from 0 to 1 (the unit of the service's `progress.percentage`), once the total is known. */
  percentage?: number;
  /** From the rate so far, once the total is known and an address has finished. */
  estimatedTimeRemainingMs?: number;
}

export interface VerifyManyOptions {
  /** Duplicate marking (Off, Safe or Relaxed: docs/verification.md#deduplication); default 'Off'. */
  deduplication?: Deduplication;
  /** 'completion' (default): entries leave as they finish; 'input': in input order (waiting for the oldest). */
  order?: 'completion' | 'input';
  /** 0–255, default 127: a batch with a higher priority gets free SMTP connections first. */
  priority?: number;
  /** Stops the batch: nothing more is yielded (the iteration throws the signal's reason), its connections close. */
  signal?: AbortSignal;
  /** Called as addresses finish (at most every 100 ms, and once when all are done, `percentage` 1). */
  onProgress?: (progress: BatchProgress) => void;
  /** Addresses read ahead of the consumer (default 10,000): bounds memory, not speed. */
  readAhead?: number;
  /**
   * This batch's quality level, instead of the verifier's: its passes over transient results, the wait between them
   * and its SMTP timeouts. With a standard level, options the verifier was given explicitly (`passes`,
   * `smtp.commandTimeoutMs`...) still apply; a custom level's own figures win over them.
   */
  quality?: Quality | QualityLevel;
  /** Override rules for this batch, tried before the verifier's (docs/verification.md#override-rules). */
  overrides?: readonly OverrideRule[];
  /** Passes over transient results for this batch, instead of its quality level's. */
  passes?: number;
  /** Entries that reached DNS or SMTP carry `evidence` (default: the verifier's `evidence`). */
  evidence?: boolean;
}

/** What a quality level sets on a verifier: passes, the wait between them, and the SMTP timeouts. */
export interface LevelSettings {
  readonly passes: number;
  readonly passDelayMs: number;
  readonly timeouts: ProbeTimeouts;
}

/** What the batch needs of its verifier: the stages, the pass settings, and the waits that close() cuts short. */
export interface BatchContext extends StageContext {
  readonly syntax: SyntaxPolicy;
  /** The verifier's own quality level: passes, the wait between them, SMTP timeouts. */
  readonly level: LevelSettings;
  /** Another quality level on this verifier (a batch's). */
  readonly qualityLevel: (quality: Quality | QualityLevel) => LevelSettings;
  /** The verifier's override rules, checked. */
  readonly overrides: readonly OverrideRule[];
  /** The same, compiled; null without rules. */
  readonly overrideMatcher: OverrideMatcher | null;
  readonly suggester: Suggester | null;
  readonly classify: (status: StatusCode) => string;
  readonly transient: ReadonlySet<StatusCode>;
  /** True while the verifier closes: a transient result is final at once. */
  readonly closing: () => boolean;
}

const PROGRESS_INTERVAL_MS = 100;
/** Entries handed out between two turns of the event loop. */
const YIELD_EVERY = 1024;
const DEFAULT_PRIORITY = 127;
const DEFAULT_READ_AHEAD = 10_000;
/** Inputs read from an asynchronous source between two turns of the event loop. */
const TURN_EVERY = 500;
const BATCH_OPTION_NAMES: OptionNames = {
  deduplication: true,
  order: true,
  priority: true,
  signal: true,
  onProgress: true,
  readAhead: true,
  quality: true,
  passes: true,
  overrides: true,
  evidence: true,
};

/** An address in the window that needs the network stages. */
interface Address {
  readonly index: number;
  readonly inputData: string;
  readonly custom: string | undefined;
  readonly parsed: ParsedAddress;
  readonly flags: Flags;
  /** An address literal's IP (probed there), or null: a domain. */
  readonly probeAt: string | null;
  readonly dedupe: DedupeGroup | null;
  passes: number;
  status: StatusCode;
  hasMx: boolean;
  /** What the last pass saw, when evidence is asked for. */
  evidence: Evidence | undefined;
}

/** The first occurrence of an address under deduplication, and the later ones waiting for its result. */
interface DedupeGroup {
  readonly index: number;
  readonly asciiDomain: string | null;
  entry: Entry | null;
  hasMx: boolean;
  readonly waiting: { index: number; inputData: string; custom: string | undefined; parsed: ParsedAddress | null }[];
}

type Optional = 'signal' | 'onProgress' | 'passes' | 'quality' | 'overrides' | 'evidence';
type BatchOptions = Required<Omit<VerifyManyOptions, Optional>> & Pick<VerifyManyOptions, Optional>;

/** verifyMany's options, checked: a name that does not exist is an error, never ignored. */
export function batchOptions(options: VerifyManyOptions | undefined): BatchOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null) throw new TypeError('verifyMany: options must be an object');
  checkOptionNames(options, BATCH_OPTION_NAMES, 'verifyMany');
  const fail = (name: string, expected: string, value: unknown) =>
    new TypeError(`verifyMany: option ${name} must be ${expected}, got ${typeof value === 'function' ? 'a function' : JSON.stringify(value) ?? String(value)}`);
  const { deduplication = 'Off', order = 'completion', priority = DEFAULT_PRIORITY, readAhead = DEFAULT_READ_AHEAD, signal, onProgress, passes } = options;
  if (!DEDUPLICATION_MODES.includes(deduplication)) throw fail('deduplication', DEDUPLICATION_MODES.join(', '), deduplication);
  if (order !== 'completion' && order !== 'input') throw fail('order', "'completion' or 'input'", order);
  if (!Number.isInteger(priority) || priority < 0 || priority > 255) throw fail('priority', 'an integer from 0 to 255', priority);
  if (!Number.isInteger(readAhead) || readAhead < 1) throw fail('readAhead', 'a positive integer', readAhead);
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw fail('signal', 'an AbortSignal', signal);
  if (onProgress !== undefined && typeof onProgress !== 'function') throw fail('onProgress', 'a function', onProgress);
  if (passes !== undefined && !(Number.isInteger(passes) && passes >= 1)) throw fail('passes', 'a positive integer', passes);
  if (options.evidence !== undefined && typeof options.evidence !== 'boolean') throw fail('evidence', 'true or false', options.evidence);
  const quality = options.quality === undefined ? undefined : checkQuality(options.quality, 'verifyMany: option quality');
  const overrides = options.overrides === undefined ? undefined : checkOverrideRules(options.overrides, 'verifyMany: option overrides');
  return { deduplication, order, priority, readAhead, signal, onProgress, passes, quality, overrides, evidence: options.evidence };
}

export class BatchRun {
  private readonly owner: ProbeOwner & { withdrawn: boolean };
  /** Passes over transient results: the batch's own, its quality level's, or the verifier's. */
  private readonly passes: number;
  private readonly passDelayMs: number;
  private readonly evidence: boolean;
  /** The batch's override rules, then the verifier's; null without any. */
  private readonly overrideOf: OverrideMatcher | null;
  /** Finished entries not yet taken: in completion order, or by index for input order. */
  private readonly ready: (Entry | undefined)[] = [];
  private readyHead = 0;
  /** Entries by index for input order; null for a settled input, which has none. */
  private readonly held = new Map<number, Entry | null>();
  private nextIndex = 0;
  private read = 0;
  private taken = 0;
  private completed = 0;
  private total: number | undefined;
  private inputDone = false;
  private reading = false;
  private stopped = false;
  private failure: { error: unknown } | null = null;
  private wake: (() => void) | null = null;
  private readonly syncInput: Iterator<BatchInput> | null;
  private readonly asyncInput: AsyncIterator<BatchInput> | null;
  private readonly dedupe: Map<string, DedupeGroup> | null;
  /** Network passes under way, and who waits for them to end. */
  private active = 0;
  private idleWaiters: (() => void)[] = [];
  /** Addresses waiting for their next pass, in due order (one delay for all, so arrival order is due order). */
  private readonly passQueue: { address: Address; dueAt: number }[] = [];
  private passTimer: NodeJS.Timeout | null = null;
  private readonly started = performance.now();
  private lastProgress = -Infinity;
  private reportedAll = false;
  /** The stage context that only fills flags (checks: 'syntax'), for duplicates; made on first use. */
  private flagContext: StageContext | undefined;
  /** An abort withdraws the batch's work at once, whether or not its consumer is waiting for an entry. */
  private readonly onAbort = (): void => {
    this.fail(this.options.signal!.reason);
    this.stop();
  };

  /** `runs`: the verifier's batches under way; the batch is in it from its first step until it stops. */
  constructor(
    private readonly context: BatchContext,
    inputs: Iterable<BatchInput> | AsyncIterable<BatchInput>,
    private readonly options: BatchOptions,
    private readonly runs: Set<BatchRun>,
  ) {
    const level = options.quality === undefined ? undefined : context.qualityLevel(options.quality);
    this.owner = { priority: options.priority, withdrawn: false, ...(level !== undefined && { timeouts: level.timeouts }) };
    this.passes = options.passes ?? (level ?? context.level).passes;
    this.passDelayMs = (level ?? context.level).passDelayMs;
    this.evidence = options.evidence ?? context.evidence;
    this.overrideOf = options.overrides === undefined || options.overrides.length === 0 ? context.overrideMatcher : compileOverrides(options.overrides, context.overrides);
    this.dedupe = options.deduplication === 'Off' ? null : new Map();
    if (typeof inputs === 'string' || typeof inputs !== 'object' || inputs === null) {
      throw new TypeError('verifyMany: inputs must be an iterable or async iterable of addresses');
    }
    if (Symbol.asyncIterator in inputs) {
      this.asyncInput = (inputs as AsyncIterable<BatchInput>)[Symbol.asyncIterator]();
      this.syncInput = null;
    } else if (Symbol.iterator in inputs) {
      this.syncInput = (inputs as Iterable<BatchInput>)[Symbol.iterator]();
      this.asyncInput = null;
      const length = (inputs as { length?: unknown }).length;
      if (Array.isArray(inputs) && typeof length === 'number') this.total = length;
    } else {
      throw new TypeError('verifyMany: inputs must be an iterable or async iterable of addresses');
    }
  }

  /**
   * The batch's entries, as a consumer takes them; ends with the last one, or throws what stopped the batch. A plain
   * iterator rather than an async generator: an entry that is ready is handed out at the cost of one resolved promise.
   */
  entries(): AsyncIterableIterator<Entry> {
    let started = false;
    /** A step waiting for an entry: a consumer that asks again meanwhile is answered after it, in order. */
    let waiting: Promise<IteratorResult<Entry>> | null = null;
    const step = (): Promise<IteratorResult<Entry>> => {
      if (!started) {
        started = true;
        this.begin();
      }
      if (this.failure !== null) {
        this.stop();
        return Promise.reject(this.failure.error);
      }
      const entry = this.take();
      if (entry !== undefined) {
        // Entries that are ready at once (offline work) would otherwise be handed out in one unbroken chain of
        // promise callbacks: now and then the event loop gets a turn, so the host's timers and I/O are not starved.
        if (this.taken % YIELD_EVERY === 0) return nextTurn().then(() => ({ value: entry, done: false }));
        return Promise.resolve({ value: entry, done: false });
      }
      if (this.stopped || (this.inputDone && this.taken === this.read)) {
        this.stop();
        return Promise.resolve({ value: undefined, done: true });
      }
      // Nothing ready: wait for the next thing that happens, then look again.
      const later = new Promise<void>((resolve) => (this.wake = resolve)).then(() => {
        waiting = null;
        return step();
      });
      waiting = later;
      return later;
    };
    const iterator: AsyncIterableIterator<Entry> = {
      next: () => (waiting === null ? step() : waiting.then(iterator.next, iterator.next)),
      return: () => {
        this.stop();
        return Promise.resolve({ value: undefined, done: true });
      },
      throw: (error?: unknown) => {
        this.stop();
        return Promise.reject(error);
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /** The first step: the batch joins its verifier's, listens to its signal and starts reading. */
  private begin(): void {
    this.runs.add(this);
    const signal = this.options.signal;
    if (signal?.aborted) this.fail(signal.reason);
    else signal?.addEventListener('abort', this.onAbort, { once: true });
    this.pump();
  }

  /** Cuts the waits before later passes short: those addresses keep the result of the pass they had. */
  cutPasses(): void {
    if (this.passTimer !== null) clearTimeout(this.passTimer);
    this.passTimer = null;
    for (const { address } of this.passQueue.splice(0)) this.finishAddress(address);
  }

  /** No network pass of this batch is under way. */
  get isIdle(): boolean {
    return this.active === 0;
  }

  /** Resolves when no network pass of this batch is under way. */
  idle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private fail(error: unknown): void {
    if (this.failure === null) this.failure = { error };
    this.notify();
  }

  /** The next entry the consumer may have, if any. */
  private take(): Entry | undefined {
    let entry: Entry | undefined;
    if (this.options.order === 'input') {
      let held = this.held.get(this.nextIndex);
      while (held === null) {
        this.held.delete(this.nextIndex++);
        held = this.held.get(this.nextIndex);
      }
      if (held === undefined) return undefined;
      entry = held;
      this.held.delete(this.nextIndex++);
    } else {
      if (this.readyHead === this.ready.length) return undefined;
      entry = this.ready[this.readyHead];
      this.ready[this.readyHead++] = undefined;
      if (this.readyHead === this.ready.length) {
        this.ready.length = 0;
        this.readyHead = 0;
      }
    }
    this.taken++;
    if (this.read - this.taken < this.options.readAhead) this.pump();
    return entry;
  }

  /** Reads inputs while the window has room. */
  private pump(): void {
    if (this.reading || this.inputDone || this.stopped || this.failure !== null) return;
    this.reading = true;
    if (this.syncInput !== null) {
      try {
        while (this.read - this.taken < this.options.readAhead && !this.stopped && this.failure === null) {
          const next = this.syncInput.next();
          if (next.done) {
            this.endOfInput();
            break;
          }
          this.accept(next.value);
        }
      } catch (error) {
        this.fail(error);
      } finally {
        this.reading = false;
      }
      this.notify();
      return;
    }
    void this.pumpAsync();
  }

  private async pumpAsync(): Promise<void> {
    try {
      let sinceTurn = 0;
      while (this.read - this.taken < this.options.readAhead && !this.stopped && this.failure === null) {
        // An input that is always ready (a store's page) would chain the whole window in one macrotask, its offline
        // stages with it: other work (a server's requests) gets a turn every so often.
        if (++sinceTurn > TURN_EVERY) {
          sinceTurn = 0;
          await nextTurn();
          if (this.stopped) return;
        }
        const next = await this.asyncInput!.next();
        if (this.stopped) return;
        if (next.done) {
          this.endOfInput();
          break;
        }
        this.accept(next.value);
        this.notify();
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.reading = false;
      this.notify();
    }
  }

  private endOfInput(): void {
    this.inputDone = true;
    this.total ??= this.read;
    // The last entry may have finished before the input was known to end (or there was none).
    if (this.completed === this.total) this.progress(true);
  }

  /** One input: the offline stages at once, then the network stages if they are needed. */
  private accept(item: BatchInput): void {
    const index = this.read;
    if (typeof item === 'object' && item !== null && SETTLED in item) return this.settle(item as SettledInput, index);
    const { inputData, custom } = batchItem(item, index);
    this.read++;
    try {
      this.start(index, inputData, custom);
    } catch {
      // A bug of ours: the input still gets its one result.
      this.emit(makeEntry({ index, inputData, status: 'UnhandledException', classification: this.context.classify('UnhandledException'), custom }));
    }
  }

  /** An input answered before: a first occurrence for duplicate marking, counted as taken and completed. */
  private settle(item: SettledInput, index: number): void {
    this.read++;
    this.taken++;
    this.completed++;
    if (this.options.order === 'input') this.held.set(index, null);
    if (this.dedupe === null) return;
    const parsed = parseWithPositions(item.inputData, this.context.syntax).result;
    const key = deduplicationKey(item.inputData, parsed, this.options.deduplication as Exclude<Deduplication, 'Off'>);
    if (this.dedupe.has(key)) return;
    const entry = { ...item[SETTLED], index };
    this.dedupe.set(key, { index, asciiDomain: parsed.ok ? parsed.asciiDomainPart : null, entry, hasMx: false, waiting: [] });
  }

  private start(index: number, inputData: string, custom: string | undefined): void {
    const { result: parsed, domainStart } = parseWithPositions(inputData, this.context.syntax);
    let dedupe: DedupeGroup | null = null;
    if (this.dedupe !== null) {
      const key = deduplicationKey(inputData, parsed, this.options.deduplication as Exclude<Deduplication, 'Off'>);
      const first = this.dedupe.get(key);
      if (first !== undefined) {
        const later = { index, inputData, custom, parsed: parsed.ok ? parsed : null };
        if (first.entry === null) first.waiting.push(later);
        else this.finishDuplicate(first, later);
        return;
      }
      dedupe = { index, asciiDomain: parsed.ok ? parsed.asciiDomainPart : null, entry: null, hasMx: false, waiting: [] };
      this.dedupe.set(key, dedupe);
    }
    if (!parsed.ok) {
      const status = parsed.status;
      return this.emit(
        makeEntry({ index, inputData, status, classification: this.context.classify(status), syntaxFailureIndex: parsed.syntaxFailureIndex, custom }),
        dedupe,
      );
    }
    const flags: Flags = { isDisposableEmailAddress: false, isRoleAccount: false, isFreeEmailAddress: false };
    const offline = offlineStages(parsed, domainStart, this.context, flags, this.overrideOf);
    const address: Address = {
      index,
      inputData,
      custom,
      parsed,
      flags,
      probeAt: offline.status === null ? offline.probeAt : null,
      dedupe,
      passes: 0,
      status: offline.status ?? 'UnhandledException',
      hasMx: false,
      evidence: undefined,
    };
    if (offline.status !== null) return this.finishAddress(address, offline.syntaxFailureIndex, offline.classification);
    this.runPass(address);
  }

  /** One pass of the network stages; a transient result waits for the next pass, as the quality level allows. */
  private runPass(address: Address): void {
    this.active++;
    networkStages(address.parsed, address.probeAt, this.context, address.flags, this.owner, this.evidence)
      .catch((): NetworkOutcome => ({ status: 'UnhandledException', hasMx: false }))
      .then((outcome) => {
        if (outcome.status !== null && !this.stopped) {
          address.passes++;
          address.status = outcome.status;
          address.hasMx = outcome.hasMx;
          address.evidence = outcome.evidence;
          if (address.passes < this.passes && this.context.transient.has(outcome.status) && !this.context.closing()) {
            this.schedulePass(address);
          } else {
            this.finishAddress(address);
          }
        }
        this.active--;
        if (this.active === 0) {
          const waiters = this.idleWaiters;
          this.idleWaiters = [];
          waiters.forEach((resolve) => resolve());
        }
      });
  }

  private schedulePass(address: Address): void {
    this.passQueue.push({ address, dueAt: performance.now() + this.passDelayMs });
    if (this.passTimer === null) this.armPassTimer();
  }

  private armPassTimer(): void {
    const head = this.passQueue[0];
    if (head === undefined) return;
    this.passTimer = setTimeout(() => {
      this.passTimer = null;
      const now = performance.now();
      while (this.passQueue.length > 0 && this.passQueue[0]!.dueAt <= now + 1) this.runPass(this.passQueue.shift()!.address);
      this.armPassTimer();
    }, Math.max(0, head.dueAt - performance.now()));
  }

  /** `classification`: an override rule's, instead of the status's. */
  private finishAddress(address: Address, syntaxFailureIndex?: number, classification?: string): void {
    const { parsed, status } = address;
    const suggestions = typoSuggestions(this.context.suggester, parsed, address.hasMx);
    if (address.dedupe !== null) address.dedupe.hasMx = address.hasMx;
    this.emit(
      makeEntry({
        index: address.index,
        inputData: address.inputData,
        status,
        classification: classification ?? this.context.classify(status),
        parsed,
        flags: address.flags,
        syntaxFailureIndex,
        suggestions,
        custom: address.custom,
        evidence: address.evidence,
      }),
      address.dedupe,
    );
  }

  /**
   * A later occurrence (docs/verification.md#deduplication): Duplicate, the first one's index and classification, its
   * own parsed parts, flags and suggestions; no network work.
   */
  private finishDuplicate(first: DedupeGroup, later: DedupeGroup['waiting'][number]): void {
    const { parsed } = later;
    let flags: Flags | undefined;
    let suggestions: string[] | undefined;
    if (parsed !== null) {
      flags = { isDisposableEmailAddress: false, isRoleAccount: false, isFreeEmailAddress: false };
      // The offline stages only for the flags: their status is not this entry's.
      this.flagContext ??= { ...this.context, checks: 'syntax' };
      offlineStages(parsed, 0, this.flagContext, flags);
      suggestions = typoSuggestions(this.context.suggester, parsed, first.hasMx && first.asciiDomain === parsed.asciiDomainPart);
    }
    this.emit(
      makeEntry({
        index: later.index,
        inputData: later.inputData,
        status: 'Duplicate',
        classification: first.entry!.classification,
        parsed: parsed ?? undefined,
        flags,
        suggestions,
        custom: later.custom,
        duplicateOf: first.index,
      }),
    );
  }

  private emit(entry: Entry, dedupe: DedupeGroup | null = null): void {
    if (this.stopped) return;
    this.context.observe.verdict?.({ status: entry.status, classification: entry.classification });
    if (this.options.order === 'input') this.held.set(entry.index, entry);
    else this.ready.push(entry);
    this.completed++;
    if (dedupe !== null) {
      dedupe.entry = entry;
      for (const later of dedupe.waiting.splice(0)) this.finishDuplicate(dedupe, later);
    }
    this.progress(this.total !== undefined && this.completed === this.total);
    this.notify();
  }

  private progress(final: boolean): void {
    const report = this.options.onProgress;
    if (report === undefined || this.reportedAll) return;
    const now = performance.now();
    if (!final && now - this.lastProgress < PROGRESS_INTERVAL_MS) return;
    this.reportedAll = final;
    this.lastProgress = now;
    const progress: BatchProgress = { completed: this.completed };
    if (this.total !== undefined) {
      progress.total = this.total;
      progress.percentage = this.total === 0 ? 1 : this.completed / this.total;
      if (this.completed > 0) {
        const perAddress = (now - this.started) / this.completed;
        progress.estimatedTimeRemainingMs = Math.round(perAddress * (this.total - this.completed));
      }
    }
    try {
      report(progress);
    } catch (error) {
      // The caller's callback failed: the batch stops with its error, rather than going on unwatched.
      this.fail(error);
    }
  }

  /**
   * Ends the batch (finished, abandoned, aborted or failed): no more reading, its waiting work withdrawn
   * (docs/verification.md#batches: nothing of it stays queued, no timer of it is left).
   */
  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.owner.withdrawn = true;
    if (this.active > 0) {
      // Network passes under way: their queued DNS queries and SMTP work go, queries in flight are aborted, and
      // sessions that carry nothing else close. Work shared with another batch stays for it.
      this.context.dns.withdraw();
      this.context.prober?.withdraw(this.owner);
    }
    if (this.passTimer !== null) clearTimeout(this.passTimer);
    this.passTimer = null;
    this.passQueue.length = 0;
    this.options.signal?.removeEventListener('abort', this.onAbort);
    // Let the source release what it holds (a file, a cursor), as for-await does when a loop ends early.
    if (!this.inputDone) {
      try {
        const returned = this.asyncInput?.return?.() ?? this.syncInput?.return?.();
        if (returned instanceof Promise) returned.catch(() => {});
      } catch {
        // The source's own cleanup failed: nothing more to do for it.
      }
    }
    this.runs.delete(this);
    // A step waiting for something to happen sees that the batch has ended.
    this.notify();
  }
}

function batchItem(item: BatchInput, index: number): { inputData: string; custom: string | undefined } {
  if (typeof item === 'string') return { inputData: item, custom: undefined };
  if (typeof item === 'object' && item !== null && typeof item.inputData === 'string') {
    if (item.custom !== undefined && typeof item.custom !== 'string') {
      throw new TypeError(`verifyMany: input ${index} has a custom value that is not a string`);
    }
    return { inputData: item.inputData, custom: item.custom };
  }
  throw new TypeError(`verifyMany: input ${index} must be a string or { inputData: string, custom?: string }`);
}
