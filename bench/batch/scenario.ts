/**
 * The batch benchmark's lab: seeded domains and addresses with a known truth per address, and the mail lab
 * scenario that serves them. Each domain has its own exchanger (one server on its own 127.0.x.y); every server
 * runs on the raw responder.
 */
import type { MailLabScenario, ServerSpec } from '../../test/lab/mail-lab.js';

/** What an address really is. The category decides the right answer (see README.md, "Batch benchmark"). */
export type Category = 'existing' | 'missing' | 'catch-all' | 'greylisting';
export const CATEGORIES: readonly Category[] = ['existing', 'missing', 'catch-all', 'greylisting'];

/** A verifier's answer, mapped from its own output (the mapping per verifier is in worker.mjs). */
export type Verdict = 'deliverable' | 'undeliverable' | 'catch-all' | 'unknown';

export interface Shape {
  addresses: number;
  domains: number;
  catchAllDomains: number;
  greylistingDomains: number;
  /** Share of addresses on ordinary and greylisting domains that have a mailbox. */
  existingShare: number;
  /** How long a recipient stays greylisted after its first attempt (0: no greylisting). */
  greylistMs: number;
  seed: number;
}

export interface BenchAddress {
  address: string;
  category: Category;
  /** Whether the mailbox exists (every address of a catch-all domain is accepted; there it is true). */
  exists: boolean;
}

export interface Bench {
  shape: Shape;
  addresses: BenchAddress[];
  servers: Record<string, ServerSpec>;
  domains: Record<string, string[]>;
}

/** mulberry32: a small seeded generator, so that every run and every machine gets the same addresses. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = ['anna', 'ben', 'carla', 'david', 'emma', 'felix', 'greta', 'hugo', 'ida', 'jonas', 'lea', 'max'];
const LAST = ['meyer', 'schmidt', 'novak', 'rossi', 'garcia', 'smith', 'dubois', 'jansen', 'kowalski', 'silva'];

export function domainName(index: number): string {
  return `d${String(index).padStart(3, '0')}-lab.com`;
}

function domainKind(index: number, shape: Shape): 'catch-all' | 'greylisting' | 'plain' {
  if (index < shape.catchAllDomains) return 'catch-all';
  if (index < shape.catchAllDomains + shape.greylistingDomains) return 'greylisting';
  return 'plain';
}

/**
 * The addresses, spread evenly over the domains and shuffled, so that one domain's addresses are scattered over
 * the input (as in a real list); the servers, one per domain, know exactly the existing mailboxes.
 */
export function buildBench(shape: Shape): Bench {
  const random = seededRandom(shape.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const addresses: BenchAddress[] = [];
  const mailboxes: string[][] = Array.from({ length: shape.domains }, () => []);
  for (let i = 0; i < shape.addresses; i++) {
    const domain = i % shape.domains;
    const kind = domainKind(domain, shape);
    const local = `${pick(FIRST)}.${pick(LAST)}${i}`;
    const exists = kind === 'catch-all' || random() < shape.existingShare;
    if (exists && kind !== 'catch-all') mailboxes[domain]?.push(local);
    const category: Category =
      kind === 'catch-all' ? 'catch-all' : kind === 'greylisting' ? 'greylisting' : exists ? 'existing' : 'missing';
    addresses.push({ address: `${local}@${domainName(domain)}`, category, exists });
  }
  for (let i = addresses.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [addresses[i], addresses[j]] = [addresses[j] as BenchAddress, addresses[i] as BenchAddress];
  }
  const servers: Record<string, ServerSpec> = {};
  const domains: Record<string, string[]> = {};
  for (let d = 0; d < shape.domains; d++) {
    const name = `mx${d}`;
    const kind = domainKind(d, shape);
    servers[name] =
      kind === 'catch-all'
        ? { acceptAll: true }
        : kind === 'greylisting' && shape.greylistMs > 0
          ? { mailboxes: mailboxes[d] ?? [], greylistMs: shape.greylistMs }
          : { mailboxes: mailboxes[d] ?? [] };
    domains[domainName(d)] = [name];
  }
  return { shape, addresses, servers, domains };
}

/** The lab scenario: raw responder everywhere, the given delays, the given port. */
export function labScenario(
  bench: Pick<Bench, 'servers' | 'domains'>,
  timing: { replyDelayMs: number; dnsDelayMs: number; port: number },
): MailLabScenario {
  return { engine: 'raw', ...timing, servers: bench.servers, domains: bench.domains };
}

/** Whether a verdict is the right answer for an address. */
export function isRight(entry: BenchAddress, verdict: Verdict): boolean {
  switch (entry.category) {
    case 'existing':
      return verdict === 'deliverable';
    case 'missing':
      return verdict === 'undeliverable';
    case 'catch-all':
      return verdict === 'catch-all';
    case 'greylisting':
      return verdict === (entry.exists ? 'deliverable' : 'undeliverable');
  }
}
