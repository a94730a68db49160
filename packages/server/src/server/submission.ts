/**
 * Reading a job submission (POST /email-validations, JSON): every field checked, a bad one named by its JSON path in
 * a 400 problem (`entries[3].custom`). Unknown fields are ignored, as the service does; enumerations are read in any
 * case and written back in their canonical spelling.
 */
import { isIP } from 'node:net';
import {
  QUALITIES,
  findQuality,
  isGlobalAddress,
  qualityName,
  type Deduplication,
  type QualityLevel,
} from 'mailverify/internal';
import { parseDuration } from '../jobs/duration.js';
import type { CallbackSettings, JobDraft, JobInput } from '../jobs/types.js';
import { readJsonBody, type JsonBody, type StreamedBody } from './json-body.js';
import { ProblemError, invalidField } from './problems.js';

export const MAX_INPUT_LENGTH = 1024;
export const MAX_CUSTOM_LENGTH = 50;
export const MAX_NAME_LENGTH = 256;
export const MIN_RETENTION_MS = 5 * 60_000;
export const MAX_RETENTION_MS = 30 * 24 * 3_600_000;
/** The longest `waitTime`, in milliseconds. */
export const MAX_WAIT_TIME_MS = 30_000;

const DEDUPLICATIONS: readonly Deduplication[] = ['Off', 'Safe', 'Relaxed'];

export interface Submission {
  readonly inputs: JobInput[];
  /** A standard level in its canonical spelling, or a custom level's id as configured. */
  readonly quality?: string;
  readonly deduplication?: Deduplication;
  readonly priority?: number;
  readonly name?: string;
  readonly retentionMs?: number;
  readonly callback?: CallbackSettings;
  /**
   * The `captcha` member as given: checked by the CAPTCHA admission stage for a user who submits with one, ignored
   * (never read) for the others.
   */
  readonly captcha?: unknown;
}

export interface SubmissionLimits {
  readonly maxEntriesPerJob: number;
  /** Callback URLs may name non-global addresses (the engine's allowPrivateAddresses). */
  readonly allowPrivateAddresses: boolean;
  /** The custom quality levels a job may name besides the standard ones. */
  readonly qualityLevels?: readonly QualityLevel[];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** How many characters (Unicode code points, as JSON Schema's `maxLength` counts them) `text` has. */
export function characterCount(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is one character in two code units.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

/** With the `u` flag a surrogate pair is one code point, so only a lone surrogate is of category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Why a text of the client cannot be kept as given, or null when it can: a NUL (it would cut the text short in
 * C-string interfaces, and an address holding one is not the address the client meant) or a lone surrogate (not
 * Unicode text: it cannot be stored as UTF-8 and would silently become U+FFFD). Refused, never altered.
 */
export function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return `holds a NUL character (U+0000) at ${text.indexOf('\u0000')}`;
  if (LONE_SURROGATE.test(text)) return 'holds a lone surrogate (not Unicode text)';
  return null;
}

/** A text field of at most `max` characters, without NUL or lone surrogates (400 naming the field otherwise). */
function readText(value: unknown, path: string, max: number, notString: string): string {
  if (typeof value !== 'string') throw invalidField(path, notString);
  const problem = textProblem(value);
  if (problem !== null) throw invalidField(path, problem);
  if (value.length > max && characterCount(value) > max) throw invalidField(path, `at most ${max} characters`);
  return value;
}

/** The canonical spelling of `value` among `names`, compared without case; null when it is none of them. */
export function canonical<T extends string>(value: unknown, names: readonly T[]): T | null {
  if (typeof value !== 'string') return null;
  const lower = value.toLowerCase();
  return names.find((name) => name.toLowerCase() === lower) ?? null;
}

/**
 * A submission from a whole parsed body. The server reads JSON bodies as a stream instead (receiveSubmission and
 * readStreamedSubmission), to the same answers: the tests hold the two against each other.
 */
export function readSubmission(body: unknown, limits: SubmissionLimits): Submission {
  if (!isObject(body)) throw invalidBody();
  const entries = body['entries'];
  if (!Array.isArray(entries)) throw invalidField('entries', 'required, an array of entries');
  checkEntryCount(entries.length, limits);
  const inputs: JobInput[] = new Array(entries.length);
  for (let i = 0; i < entries.length; i++) inputs[i] = readEntry(entries[i], `entries[${i}]`);
  return { inputs, ...readJobSettings(body, limits) };
}

export const invalidBody = (): ProblemError => new ProblemError(400, 'The request body must be a JSON object.', '/problems/invalid-body');

function checkEntryCount(count: number, limits: SubmissionLimits): void {
  if (count === 0) throw invalidField('entries', 'must hold at least one entry');
  if (count > limits.maxEntriesPerJob) throw invalidField('entries', `at most ${limits.maxEntriesPerJob} entries per job, got ${count}`);
}

/**
 * Valid inputs stored per batch while a submission arrives, at the end of the chunk of the body that completes one
 * (a few milliseconds of inserts each): they are garbage while young, which keeps the heap small.
 */
const STORE_BATCH = 1_000;

/** A JSON submission read as a stream: its members, and its entries, the valid ones already in the job draft. */
export interface StreamedSubmission {
  readonly body: JsonBody;
  /** Elements of the `entries` array, valid or not. */
  readonly count: number;
  /** The refusal of the first invalid entry, if any. */
  readonly entryProblem: ProblemError | null;
}

/**
 * Reads a JSON submission from its body stream (`undefined`: no body), checking each entry as it comes and storing
 * the valid ones in `draft` a batch at a time, with a turn of the event loop after every chunk of the body. Once an
 * entry is invalid or there are too many, nothing more is stored, but the body is read to its end: the answer is the
 * one the whole body gets (malformed JSON further on, a body too large). `members`: the other fields to keep.
 */
export async function receiveSubmission(
  body: StreamedBody | undefined,
  bodyLimit: number,
  members: readonly string[],
  limits: SubmissionLimits,
  draft: JobDraft,
): Promise<StreamedSubmission> {
  let pending: JobInput[] = [];
  let count = 0;
  let entryProblem: ProblemError | null = null;
  let stored = false;
  let clear = false;
  const store = async (): Promise<void> => {
    if (clear) {
      clear = false;
      await draft.clear();
    }
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    stored = true;
    await draft.add(batch);
  };
  const json: JsonBody =
    body === undefined
      ? { root: 'none', members: {}, entries: 'absent' }
      : await readJsonBody(body, bodyLimit, members, {
          entriesStart: () => {
            // A repeated `entries` replaces the earlier one (JSON.parse keeps the last value of a key).
            count = 0;
            entryProblem = null;
            pending = [];
            clear = stored;
            stored = false;
          },
          entry: (value, index) => {
            count = index + 1;
            if (entryProblem !== null || count > limits.maxEntriesPerJob) {
              pending = [];
              return;
            }
            try {
              pending.push(readEntry(value, `entries[${index}]`));
            } catch (error) {
              if (!(error instanceof ProblemError)) throw error;
              entryProblem = error;
              pending = [];
            }
          },
          drain: async () => {
            if (clear || pending.length >= STORE_BATCH) await store();
          },
        });
  await store();
  return { body: json, count, entryProblem };
}

/**
 * The checks of `readSubmission` on a streamed submission, in the same order, once its root is known to be an
 * object: the entries, then the settings.
 */
export function readStreamedSubmission(submission: StreamedSubmission, limits: SubmissionLimits): Omit<Submission, 'inputs'> {
  if (submission.body.entries !== 'array') throw invalidField('entries', 'required, an array of entries');
  checkEntryCount(submission.count, limits);
  if (submission.entryProblem !== null) throw submission.entryProblem;
  return readJobSettings(submission.body.members, limits);
}

/**
 * The settings of a job besides its entries (quality, deduplication, priority, name, retention, callback, and the
 * `captcha` member kept as given), from a JSON object: the JSON body, or the `settings` part of a file import.
 */
export function readJobSettings(body: Record<string, unknown>, limits: SubmissionLimits): Omit<Submission, 'inputs'> {
  const submission: { -readonly [K in keyof Submission]?: Submission[K] } = {};

  if (body['quality'] != null) {
    const levels = limits.qualityLevels ?? [];
    const quality = typeof body['quality'] === 'string' ? findQuality(body['quality'], levels) : null;
    if (quality === null) throw invalidField('quality', `must be one of ${[...QUALITIES, ...levels.map(qualityName)].join(', ')}`);
    submission.quality = qualityName(quality);
  }
  if (body['deduplication'] != null) {
    const deduplication = canonical(body['deduplication'], DEDUPLICATIONS);
    if (deduplication === null) throw invalidField('deduplication', `must be one of ${DEDUPLICATIONS.join(', ')}`);
    submission.deduplication = deduplication;
  }
  if (body['priority'] != null) {
    const priority = body['priority'];
    if (!Number.isInteger(priority) || (priority as number) < 0 || (priority as number) > 255) {
      throw invalidField('priority', 'must be an integer from 0 to 255');
    }
    submission.priority = priority as number;
  }
  if (body['name'] != null) {
    submission.name = readText(body['name'], 'name', MAX_NAME_LENGTH, 'must be a string');
  }
  if (body['retention'] != null) submission.retentionMs = readRetention(body['retention']);
  if (body['callback'] != null) submission.callback = readCallback(body['callback'], limits);
  if (body['captcha'] != null) submission.captcha = body['captcha'];
  return submission;
}

function readEntry(entry: unknown, path: string): JobInput {
  if (!isObject(entry)) throw invalidField(path, 'must be an object with inputData');
  const inputData = readText(entry['inputData'], `${path}.inputData`, MAX_INPUT_LENGTH, 'required, a string');
  if (entry['custom'] == null) return { inputData };
  return { inputData, custom: readText(entry['custom'], `${path}.custom`, MAX_CUSTOM_LENGTH, 'must be a string') };
}

/** A retention period, `[d.]h:m:s[.f]`, from 0:05:00 to 30.00:00:00. */
export function readRetention(value: unknown): number {
  const ms = typeof value === 'string' ? parseDuration(value) : null;
  if (ms === null) throw invalidField('retention', 'must be a duration [d.]hh:mm:ss');
  if (ms < MIN_RETENTION_MS || ms > MAX_RETENTION_MS) throw invalidField('retention', 'must be from 0:05:00 to 30.00:00:00');
  return ms;
}

function readCallback(value: unknown, limits: SubmissionLimits): CallbackSettings {
  if (!isObject(value)) throw invalidField('callback', 'must be an object with url');
  const url = value['url'];
  if (typeof url !== 'string') throw invalidField('callback.url', 'required, an absolute http or https URL');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidField('callback.url', 'must be an absolute http or https URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalidField('callback.url', 'must be an absolute http or https URL');
  }
  if (!limits.allowPrivateAddresses && !isPublicHost(parsed.hostname)) {
    throw invalidField('callback.url', 'must not name a local or private address');
  }
  const version = value['version'] ?? '1.1';
  if (version !== '1.0' && version !== '1.1') throw invalidField('callback.version', 'must be "1.0" or "1.1"');
  const skip = value['skipServerCertificateValidation'] ?? false;
  if (typeof skip !== 'boolean') throw invalidField('callback.skipServerCertificateValidation', 'must be true or false');
  return { url: parsed.href, version, skipServerCertificateValidation: skip };
}

/** A host name that may be public: not `localhost`, and an IP literal only when it is a global address. */
function isPublicHost(hostname: string): boolean {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (host === 'localhost' || host.endsWith('.localhost')) return false;
  return isIP(host) === 0 || isGlobalAddress(host);
}

/** `waitTime`: an integer 0–30000 (milliseconds); absent: 0. */
export function readWaitTime(value: unknown): number {
  if (value === undefined) return 0;
  const text = String(value);
  if (!/^\d{1,5}$/.test(text) || Number(text) > MAX_WAIT_TIME_MS) throw invalidField('waitTime', `must be an integer from 0 to ${MAX_WAIT_TIME_MS}`);
  return Number(text);
}
