/**
 * The lists (docs/lists.md) behind steps 4 and 6 of the pipeline (docs/verification.md#the-pipeline) and the
 * isFreeEmailAddress / isRoleAccount flags. The built-in data is built once per process, on the first createLists call,
 * and shared; a list that options change is copied first, so one verifier's options never leak into another's.
 */
import { namesOf, type Sourced } from './data/sourced.js';
import { DISPOSABLE_MAIL_EXCHANGERS, HONEYPOT_MAIL_EXCHANGERS, PARKED_MAIL_EXCHANGERS } from './data/mail-exchangers.js';
import { RELAY_DOMAINS } from './data/relay-domains.js';
import { ROLE_LOCAL_PARTS } from './data/role-local-parts.js';
import { mailboxName } from '../syntax/local-part.js';
import { DomainSet, DomainSetUnion, normalizeDomain } from './domain-set.js';
import { disposableDomainData, freeProviderDomainData, usableEntries } from './packages.js';
import { screenFreeProviders } from './free-providers.js';

/**
 * How options change a list. A plain iterable adds its entries to the built-in list (extend);
 * `{ replace }` starts from the given entries instead of the built-in ones; `add` and `remove` then apply, in that
 * order. Removing deletes that exact entry: a subdomain of a listed domain still matches through its parent.
 */
export type ListOption = Iterable<string> | { add?: Iterable<string>; remove?: Iterable<string>; replace?: Iterable<string> };

export interface ListsOptions {
  disposableDomains?: ListOption;
  freeProviderDomains?: ListOption;
  roleLocalParts?: ListOption;
  relayDomains?: ListOption;
  disposableMailExchangers?: ListOption;
  parkedMailExchangers?: ListOption;
  honeypotMailExchangers?: ListOption;
}

export type MailExchangerCategory = 'disposable' | 'parked' | 'honeypot';

export interface Lists {
  /** DomainIsWellKnownDea: the domain or a parent is a disposable-mail domain. */
  isDisposableDomain(asciiDomain: string): boolean;
  /** The isFreeEmailAddress flag. A disposable domain is never a free provider (as AfterShip does). */
  isFreeProvider(asciiDomain: string): boolean;
  /** The isRoleAccount flag; `localPart` as written, quotes included. */
  isRoleAccount(localPart: string): boolean;
  /** MailboxIsDea: the domain belongs to a masking or relay service. */
  isRelayDomain(asciiDomain: string): boolean;
  /** What an exchanger's host name (lower case, no trailing dot) reveals, or null. */
  mailExchangerCategory(mxHost: string): MailExchangerCategory | null;
}

const SEPARATORS = /[._-]/g;

/**
 * The form role local parts are compared in: unquoted (`"support"` is the mailbox `support`, RFC 5321 §4.1.2), cut
 * before the first `+` (sub-address tag), lower case, with `.`, `-` and `_` removed (`no-reply` = `noreply`).
 */
export function roleKey(localPart: string): string {
  let key = mailboxName(localPart);
  const plus = key.indexOf('+');
  if (plus !== -1) key = key.slice(0, plus);
  return key.toLowerCase().replace(SEPARATORS, '');
}

/**
 * Whether `localPart` may be a role local part, decided without making its key in most cases: for an unquoted
 * ASCII local part the key's length and first character are known from one pass, and most personal local parts
 * have a length or first letter no role key has. True means "make the key and look".
 */
class RoleKeyFilter {
  private readonly lengths = new Set<number>();
  private readonly firstChars = new Uint8Array(128);

  constructor(keys: Iterable<string>) {
    for (const key of keys) {
      this.lengths.add(key.length);
      const first = key.charCodeAt(0);
      if (first < 0x80) this.firstChars[first] = 1;
    }
  }

  mayMatch(localPart: string): boolean {
    if (localPart.charCodeAt(0) === 0x22) return true; // quoted: roleKey unquotes it
    let length = 0;
    let first = -1;
    for (let i = 0; i < localPart.length; i++) {
      let c = localPart.charCodeAt(i);
      if (c === 0x2b) break; // `+`: the tag is not part of the key
      if (c >= 0x80) return true; // lower-casing non-ASCII may change the length
      if (c === 0x2e || c === 0x2d || c === 0x5f) continue; // `.`, `-`, `_` are removed
      if (c >= 0x41 && c <= 0x5a) c |= 0x20;
      if (first === -1) first = c;
      length++;
    }
    if (!this.lengths.has(length)) return false;
    return first === -1 || this.firstChars[first] === 1;
  }
}

interface BuiltIn {
  disposableDomains: DomainSet;
  freeProviderDomains: DomainSet;
  roleLocalParts: ReadonlySet<string>;
  relayDomains: DomainSet;
  disposableMailExchangers: DomainSet;
  parkedMailExchangers: DomainSet;
  honeypotMailExchangers: DomainSet;
}

let builtIn: BuiltIn | undefined;

function tableSet(groups: readonly Sourced[]): DomainSet {
  return new DomainSet(namesOf(groups));
}

/** The built-in lists, built on first use: some 17,600 package entries checked and hashed, about 15 ms. */
function builtInLists(): BuiltIn {
  if (builtIn !== undefined) return builtIn;
  const relayDomains = tableSet(RELAY_DOMAINS);
  const disposableDomains = DomainSet.fromNormalized(usableEntries(disposableDomainData()));
  // A relay service is MailboxIsDea, not DomainIsWellKnownDea, even if the package starts listing it.
  for (const relay of relayDomains) disposableDomains.delete(relay);
  builtIn = {
    disposableDomains,
    // Without the package's documentation names and typo domains (free-providers.ts): a typo gets a suggestion instead.
    freeProviderDomains: DomainSet.fromNormalized(screenFreeProviders(usableEntries(freeProviderDomainData())).kept),
    roleLocalParts: new Set(namesOf(ROLE_LOCAL_PARTS).map(roleKey)),
    relayDomains,
    disposableMailExchangers: tableSet(DISPOSABLE_MAIL_EXCHANGERS),
    parkedMailExchangers: tableSet(PARKED_MAIL_EXCHANGERS),
    honeypotMailExchangers: tableSet(HONEYPOT_MAIL_EXCHANGERS),
  };
  return builtIn;
}

interface OptionParts {
  replace?: Iterable<string>;
  add?: Iterable<string>;
  remove?: Iterable<string>;
}

function isIterable(value: unknown): value is Iterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function';
}

/** Reads a ListOption; a string is refused, since iterating it would add one entry per character. */
function optionParts(name: string, option: ListOption): OptionParts {
  if (isIterable(option)) return { add: option };
  if (typeof option !== 'object' || option === null) {
    throw new TypeError(`createLists: option ${name} must be an iterable of strings or { add, remove, replace }`);
  }
  const parts: OptionParts = {};
  for (const key of Object.keys(option)) {
    if (key !== 'add' && key !== 'remove' && key !== 'replace') {
      throw new TypeError(`createLists: option ${name} has an unknown key ${JSON.stringify(key)}`);
    }
    const value: unknown = option[key];
    if (value === undefined) continue;
    if (!isIterable(value)) throw new TypeError(`createLists: option ${name}.${key} must be an iterable of strings`);
    parts[key] = value as Iterable<string>;
  }
  return parts;
}

function* checkedStrings(name: string, values: Iterable<unknown>): Generator<string> {
  for (const value of values) {
    if (typeof value !== 'string') throw new TypeError(`createLists: option ${name} has a non-string entry ${String(value)}`);
    yield value;
  }
}

function checkedDomain(name: string, value: string): string {
  const domain = normalizeDomain(value);
  if (domain === null) throw new RangeError(`createLists: option ${name} has ${JSON.stringify(value)}, which is not a domain name`);
  return domain;
}

function domainList(name: string, builtInSet: DomainSet, option: ListOption | undefined): DomainSet {
  if (option === undefined) return builtInSet;
  const parts = optionParts(name, option);
  const list = DomainSet.fromNormalized(parts.replace === undefined ? builtInSet : []);
  for (const value of checkedStrings(name, parts.replace ?? [])) list.add(checkedDomain(name, value));
  for (const value of checkedStrings(name, parts.add ?? [])) list.add(checkedDomain(name, value));
  for (const value of checkedStrings(name, parts.remove ?? [])) list.delete(checkedDomain(name, value));
  return list;
}

function roleList(name: string, builtInSet: ReadonlySet<string>, option: ListOption | undefined): ReadonlySet<string> {
  if (option === undefined) return builtInSet;
  const parts = optionParts(name, option);
  const keys = (values: Iterable<string>): string[] =>
    Array.from(checkedStrings(name, values), (value) => {
      const key = roleKey(value);
      if (key.length === 0) throw new RangeError(`createLists: option ${name} has ${JSON.stringify(value)}, which is no local part`);
      return key;
    });
  const list = new Set(parts.replace === undefined ? builtInSet : keys(parts.replace));
  for (const key of keys(parts.add ?? [])) list.add(key);
  for (const key of keys(parts.remove ?? [])) list.delete(key);
  return list;
}

/** The union of the built-in domain lists, made once when a verifier without options for them first asks. */
let builtInUnion: DomainSetUnion | undefined;

function unionOf(disposable: DomainSet, free: DomainSet, relay: DomainSet, base: BuiltIn): DomainSetUnion {
  const union = new DomainSetUnion([disposable, free, relay]);
  if (disposable === base.disposableDomains && free === base.freeProviderDomains && relay === base.relayDomains) {
    builtInUnion = union;
  }
  return union;
}

/** Bits of DomainSetUnion answers, in the order the union is made. */
const DISPOSABLE = 1;
const FREE = 2;
const RELAY = 4;

export function createLists(options: ListsOptions = {}): Lists {
  if (typeof options !== 'object' || options === null) throw new TypeError('createLists: options must be an object');
  const base = builtInLists();
  const disposable = domainList('disposableDomains', base.disposableDomains, options.disposableDomains);
  const free = domainList('freeProviderDomains', base.freeProviderDomains, options.freeProviderDomains);
  const roles = roleList('roleLocalParts', base.roleLocalParts, options.roleLocalParts);
  const relay = domainList('relayDomains', base.relayDomains, options.relayDomains);
  const disposableMx = domainList('disposableMailExchangers', base.disposableMailExchangers, options.disposableMailExchangers);
  const parkedMx = domainList('parkedMailExchangers', base.parkedMailExchangers, options.parkedMailExchangers);
  const honeypotMx = domainList('honeypotMailExchangers', base.honeypotMailExchangers, options.honeypotMailExchangers);
  const roleFilter = new RoleKeyFilter(roles);

  // The pipeline asks the three domain questions about one domain in a row: one walk answers all three, and the
  // answer for the last domain is kept. The union is made on the first question.
  let union: DomainSetUnion | undefined =
    disposable === base.disposableDomains && free === base.freeProviderDomains && relay === base.relayDomains
      ? builtInUnion
      : undefined;
  let lastDomain: string | undefined;
  let lastBits = 0;
  const domainBits = (domain: string): number => {
    if (domain !== lastDomain) {
      union ??= unionOf(disposable, free, relay, base);
      lastBits = union.matches(domain);
      lastDomain = domain;
    }
    return lastBits;
  };

  return {
    isDisposableDomain: (domain) => (domainBits(domain) & DISPOSABLE) !== 0,
    isFreeProvider: (domain) => (domainBits(domain) & (FREE | DISPOSABLE)) === FREE,
    isRoleAccount: (localPart) => roleFilter.mayMatch(localPart) && roles.has(roleKey(localPart)),
    isRelayDomain: (domain) => (domainBits(domain) & RELAY) !== 0,
    mailExchangerCategory(host) {
      // A host under a disposable domain is that service's own exchanger (mail.mailinator.com).
      if (disposableMx.matches(host) || disposable.matches(host)) return 'disposable';
      if (parkedMx.matches(host)) return 'parked';
      if (honeypotMx.matches(host)) return 'honeypot';
      return null;
    },
  };
}
