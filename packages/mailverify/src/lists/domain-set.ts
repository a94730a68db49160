/**
 * A set of domain names whose lookups also match subdomains: `x.mailinator.com` is in a set that lists
 * `mailinator.com`. A lookup checks the name, then each parent by walking the dots, so it costs at most one hash
 * lookup per label (a domain has at most 127). Parents are only cut out for label counts that some entry has, so the
 * usual lookup takes one or two `Set.has` calls and allocates no more than that many substrings.
 *
 * A listed public suffix matches only itself. Lists compiled by others hold a few (`com.ar` and `msk.ru` among the
 * free providers, the dynamic-DNS zone `dns.army` among the disposable domains), and letting them cover their
 * subdomains would flag every domain registered under them, a company's `acme.com.ar` as much as anyone's.
 */
import { getPublicSuffix } from 'tldts';
import { detached, mapDomainToAscii } from '../syntax/idna.js';

/** Lower-case LDH labels (and `_`, which some host names carry), separated by single dots. */
const HOST_NAME = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/;
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * The form entries are stored in: lower-case A-labels, no trailing dot, no surrounding white space.
 * Returns null for a string that is not a host name (`x@y.org`, `a..b`, an empty string).
 */
export function normalizeDomain(name: string): string | null {
  let domain = name.trim().toLowerCase();
  if (domain.endsWith('.')) domain = domain.slice(0, -1);
  // U-labels in the data (`müll.email`) are stored as A-labels, the form callers look up; a disallowed character
  // leaves nothing to store.
  if (NON_ASCII.test(domain)) domain = mapDomainToAscii(domain) ?? '';
  return domain.length > 0 && domain.length <= 253 && HOST_NAME.test(domain) ? domain : null;
}

/** Entries are clean host names: tldts can skip URL parsing and validation. */
const HOST_NAME_INPUT = { allowPrivateDomains: true, extractHostname: false, validateHostname: false, detectIp: false };
/** Only entries that a lookup reached through a subdomain are ever asked about, so this stays small. */
const publicSuffixes = new Map<string, boolean>();

function isPublicSuffix(name: string): boolean {
  let known = publicSuffixes.get(name);
  if (known === undefined) {
    known = getPublicSuffix(name, HOST_NAME_INPUT) === name;
    publicSuffixes.set(detached(name), known); // a copy: `name` may be a view of a whole input
  }
  return known;
}

function labelCount(domain: string): number {
  let count = 1;
  for (let i = domain.indexOf('.'); i !== -1; i = domain.indexOf('.', i + 1)) count++;
  return count;
}

export class DomainSet implements Iterable<string> {
  private readonly names = new Set<string>();
  /** How many entries have n labels, at index n: parents of other lengths are never looked up. */
  private readonly byLabelCount: number[] = [];

  /** Entries that are not host names are skipped; use `normalizeDomain` first to reject them instead. */
  constructor(domains: Iterable<string> = []) {
    for (const domain of domains) this.add(domain);
  }

  get size(): number {
    return this.names.size;
  }

  /** A set of names already in stored form (from `normalizeDomain` or another set), skipping the re-check. */
  static fromNormalized(names: Iterable<string>): DomainSet {
    const set = new DomainSet();
    for (const name of names) set.insert(name);
    return set;
  }

  /** Adds a domain; false when it is not a host name or is already listed. */
  add(domain: string): boolean {
    const name = normalizeDomain(domain);
    return name !== null && this.insert(name);
  }

  private insert(name: string): boolean {
    if (this.names.has(name)) return false;
    this.names.add(name);
    const labels = labelCount(name);
    this.byLabelCount[labels] = (this.byLabelCount[labels] ?? 0) + 1;
    return true;
  }

  /** Removes an entry (exactly that name: removing `x.mailinator.com` leaves `mailinator.com` matching it). */
  delete(domain: string): boolean {
    const name = normalizeDomain(domain);
    if (name === null || !this.names.delete(name)) return false;
    const labels = labelCount(name);
    this.byLabelCount[labels] = (this.byLabelCount[labels] ?? 1) - 1;
    return true;
  }

  /** The entry itself is listed (no parent walk). */
  hasEntry(domain: string): boolean {
    const name = normalizeDomain(domain);
    return name !== null && this.names.has(name);
  }

  /**
   * The domain or one of its parents is listed. Callers pass lower-case A-labels without a trailing dot (what the
   * parser and the DNS stage produce); other case is folded, which allocates only when there is something to fold.
   */
  matches(domain: string): boolean {
    return this.match(domain) !== null;
  }

  /** The entry that matches: the domain itself or its nearest listed parent that is no public suffix; else null. */
  match(domain: string): string | null {
    if (this.names.size === 0) return null;
    let name = domain.toLowerCase();
    if (name.endsWith('.')) name = name.slice(0, -1);
    let labels = labelCount(name);
    if ((this.byLabelCount[labels] ?? 0) > 0 && this.names.has(name)) return name;
    for (let dot = name.indexOf('.'); dot !== -1; dot = name.indexOf('.', dot + 1)) {
      labels--;
      if ((this.byLabelCount[labels] ?? 0) === 0) continue;
      const parent = name.slice(dot + 1);
      if (this.names.has(parent) && !isPublicSuffix(parent)) return parent;
    }
    return null;
  }

  [Symbol.iterator](): Iterator<string> {
    return this.names.values();
  }
}

/**
 * Several sets asked about one domain at once: one walk over the domain and its parents answers every set. Bit i of
 * the answer is `sets[i].matches(domain)`. The sets are read when the union is made; it does not follow later
 * changes to them.
 */
export class DomainSetUnion {
  /** Every entry of any set, with the bits of the sets that list it. */
  private readonly bits = new Map<string, number>();
  private readonly byLabelCount: number[] = [];
  private readonly all: number;

  constructor(sets: readonly DomainSet[]) {
    sets.forEach((set, i) => {
      for (const name of set) {
        const known = this.bits.get(name);
        if (known === undefined) {
          const labels = labelCount(name);
          this.byLabelCount[labels] = (this.byLabelCount[labels] ?? 0) + 1;
        }
        this.bits.set(name, (known ?? 0) | (1 << i));
      }
    });
    this.all = (1 << sets.length) - 1;
  }

  /** The bits of the sets that match the domain (as DomainSet.match: the name or a parent that is no public suffix). */
  matches(domain: string): number {
    if (this.bits.size === 0) return 0;
    let name = domain.toLowerCase();
    if (name.endsWith('.')) name = name.slice(0, -1);
    let labels = labelCount(name);
    let found = (this.byLabelCount[labels] ?? 0) > 0 ? (this.bits.get(name) ?? 0) : 0;
    for (let dot = name.indexOf('.'); dot !== -1 && found !== this.all; dot = name.indexOf('.', dot + 1)) {
      labels--;
      if ((this.byLabelCount[labels] ?? 0) === 0) continue;
      const parent = name.slice(dot + 1);
      const bits = this.bits.get(parent);
      if (bits !== undefined && (found | bits) !== found && !isPublicSuffix(parent)) found |= bits;
    }
    return found;
  }
}
