/**
 * The account's classifier override rules as the store keeps them (docs/verification.md#override-rules). Each distinct
 * list is kept once, under `overrides:<SHA-256 of its JSON>`, and never changed: a job records the key of the list it
 * was submitted with and runs with that list whatever the account's rules become later, across restarts too. The
 * setting `overrides` holds the key of the account's current list ('' or absent: no rules).
 */
import { createHash } from 'node:crypto';
import { checkOverrideRules, type OverrideRule } from 'mailverify/internal';
import type { JobStore } from './types.js';

/** The setting that holds the key of the account's current list. */
export const CURRENT_OVERRIDES = 'overrides';
const LIST_PREFIX = 'overrides:';

/** The most rules of the account's list. */
export const MAX_OVERRIDE_RULES = 10_000;

type Settings = Pick<JobStore, 'getSetting' | 'setSetting'>;

/** Keeps a list (if not kept yet) and returns its key; an empty list has none. */
export async function saveOverrideList(store: Settings, rules: readonly OverrideRule[]): Promise<string | undefined> {
  if (rules.length === 0) return undefined;
  const json = JSON.stringify(rules.map(({ match, classification }) => ({ match, classification })));
  const key = `${LIST_PREFIX}${createHash('sha256').update(json).digest('hex')}`;
  if ((await store.getSetting(key)) === null) await store.setSetting(key, json);
  return key;
}

/** Override lists kept in memory by a runner of jobs. */
const OVERRIDE_LISTS_KEPT = 16;

/**
 * The override lists a runner's jobs name, read from the store once each: a list never changes once kept, and many jobs
 * share one (mostly the account's current list), so the last few are kept rather than every past one. A failed read
 * (a full disk, the database away) is tried again by the next job that needs the list.
 */
export class OverrideLists {
  readonly #lists = new Map<string, Promise<OverrideRule[]>>();

  constructor(private readonly store: Settings) {}

  get(key: string): Promise<OverrideRule[]> {
    let list = this.#lists.get(key);
    if (list === undefined) {
      list = readOverrideList(this.store, key);
      if (this.#lists.size >= OVERRIDE_LISTS_KEPT) this.#lists.delete(this.#lists.keys().next().value!);
      this.#lists.set(key, list);
      list.catch(() => this.#lists.delete(key));
    }
    return list;
  }
}

/** The list kept under `key`; an error when it is missing or damaged (the data was changed outside the server). */
export async function readOverrideList(store: Settings, key: string): Promise<OverrideRule[]> {
  if (!key.startsWith(LIST_PREFIX)) throw new Error(`${key} is not the key of an override list`);
  const json = await store.getSetting(key);
  if (json === null) throw new Error(`the override list ${key} is missing from the store`);
  return checkOverrideRules(JSON.parse(json), key);
}

/** Makes `rules` the account's list (the rules of every job submitted from now on); returns its key. */
export async function setAccountOverrides(store: Settings, rules: readonly OverrideRule[]): Promise<string | undefined> {
  const key = await saveOverrideList(store, rules);
  await store.setSetting(CURRENT_OVERRIDES, key ?? '');
  return key;
}

/** The key of the account's current list; undefined without rules. */
export async function accountOverridesKey(store: Settings): Promise<string | undefined> {
  const key = await store.getSetting(CURRENT_OVERRIDES);
  return key === null || key === '' ? undefined : key;
}

/** The account's current rules (an empty list without any). */
export async function accountOverrides(store: Settings): Promise<OverrideRule[]> {
  const key = await accountOverridesKey(store);
  return key === undefined ? [] : readOverrideList(store, key);
}
