// Deterministic input corpora for the syntax benchmark.
//
// Every worker process regenerates its corpus from a fixed seed instead of reading a file, so all
// implementations see exactly the same strings and nothing has to be checked in.
//
//   node bench/syntax/corpus.mjs realistic       # print the corpus, one address per line
//   node bench/syntax/corpus.mjs simple-valid

import { pathToFileURL } from 'node:url';

export const SEED = 0x6d61696c; // "mail"
export const CORPUS_SIZE = 20_000;

/** Shares of the realistic corpus by kind; the counts are exact (rounded from CORPUS_SIZE). */
export const REALISTIC_MIX = { plain: 0.85, typo: 0.08, international: 0.04, edge: 0.03 };

// ---------------------------------------------------------------------------------------------
// Seeded PRNG

/** mulberry32: tiny, fast, good enough for test data, and identical on every platform. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  constructor(seed) {
    this.next = mulberry32(seed);
  }
  int(n) {
    return Math.floor(this.next() * n);
  }
  chance(p) {
    return this.next() < p;
  }
  pick(list) {
    return list[this.int(list.length)];
  }
  /** Skewed towards the start of the list (a few entries get most picks, like real traffic). */
  pickSkewed(list) {
    return list[Math.floor(list.length * this.next() ** 2.5)];
  }
  /** `table` is a list of [value, weight]; see `weighted()`. */
  pickWeighted(table) {
    const r = this.next() * table.total;
    let lo = 0;
    let hi = table.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (table.cumulative[mid] > r) hi = mid;
      else lo = mid + 1;
    }
    return table.values[lo];
  }
  shuffle(list) {
    for (let i = list.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [list[i], list[j]] = [list[j], list[i]];
    }
    return list;
  }
}

/** Precomputes cumulative weights so that a weighted pick is a binary search. */
function weighted(pairs) {
  const values = [];
  const cumulative = [];
  let total = 0;
  for (const [value, weight] of pairs) {
    total += weight;
    values.push(value);
    cumulative.push(total);
  }
  return { values, cumulative, total };
}

// ---------------------------------------------------------------------------------------------
// Vocabulary

// ~50 large mailbox providers, weighted roughly by how often they show up in consumer lists.
const PROVIDERS = weighted([
  ['gmail.com', 300], ['yahoo.com', 90], ['hotmail.com', 80], ['outlook.com', 50], ['icloud.com', 40],
  ['aol.com', 25], ['qq.com', 15], ['live.com', 15], ['hotmail.co.uk', 12], ['mail.ru', 12],
  ['yahoo.co.uk', 10], ['comcast.net', 10], ['yandex.ru', 10], ['gmx.de', 10], ['web.de', 10],
  ['163.com', 10], ['msn.com', 8], ['me.com', 8], ['orange.fr', 8], ['gmx.net', 6],
  ['t-online.de', 6], ['hotmail.fr', 6], ['naver.com', 6], ['protonmail.com', 6], ['att.net', 5],
  ['yahoo.fr', 5], ['free.fr', 5], ['libero.it', 5], ['uol.com.br', 5], ['yahoo.com.br', 5],
  ['126.com', 5], ['yahoo.co.jp', 5], ['laposte.net', 4], ['bol.com.br', 4], ['rediffmail.com', 4],
  ['yahoo.co.in', 4], ['proton.me', 4], ['ymail.com', 4], ['btinternet.com', 4], ['verizon.net', 4],
  ['sbcglobal.net', 4], ['terra.com.br', 3], ['daum.net', 3], ['zoho.com', 3], ['sky.com', 3],
  ['virginmedia.com', 3], ['shaw.ca', 3], ['bigpond.com', 3], ['seznam.cz', 3], ['wp.pl', 3],
  ['googlemail.com', 3], ['live.co.uk', 3], ['fastmail.com', 2],
]);

const TLDS = weighted([
  ['com', 50], ['net', 6], ['org', 6], ['io', 5], ['de', 5], ['co.uk', 5], ['co', 3], ['fr', 3],
  ['com.br', 3], ['com.au', 3], ['nl', 2], ['it', 2], ['es', 2], ['ca', 2], ['ch', 1], ['se', 1],
  ['pl', 1], ['in', 1], ['co.jp', 1], ['co.za', 1], ['com.mx', 1], ['dev', 1], ['ai', 1], ['eu', 1],
  ['be', 1], ['at', 1], ['dk', 1], ['no', 1], ['us', 1], ['ie', 1],
]);

const BRAND_HEADS = [
  'acme', 'blue', 'north', 'river', 'summit', 'peak', 'bright', 'data', 'cloud', 'green', 'alpha', 'nova',
  'terra', 'apex', 'cedar', 'pixel', 'quantum', 'silver', 'stone', 'urban', 'vertex', 'harbor', 'maple',
  'orbit', 'prime', 'solar', 'swift', 'true', 'west', 'zen', 'iron', 'oak', 'red', 'sky', 'metro',
];
const BRAND_TAILS = [
  'labs', 'systems', 'group', 'works', 'tech', 'soft', 'solutions', 'partners', 'media', 'logistics',
  'capital', 'health', 'foods', 'energy', 'design', 'consulting', 'studio', 'networks', 'analytics',
  'ventures', 'bank', 'legal', 'motors', 'realty', 'print',
];
const SYLLABLES = [
  'ka', 'ro', 'vi', 'lo', 'ne', 'ta', 'mi', 'zu', 'sa', 'be', 'tri', 'on', 'ex', 'ar', 'el', 'in', 'qu',
  'ly', 'do', 'fi', 'gen', 'max', 'tor', 'pa',
];
const SUBDOMAINS = ['mail', 'corp', 'eng', 'uk', 'us', 'staff', 'students', 'alumni'];

const FIRST_NAMES = [
  'james', 'mary', 'john', 'patricia', 'robert', 'jennifer', 'michael', 'linda', 'william', 'elizabeth',
  'david', 'barbara', 'richard', 'susan', 'joseph', 'jessica', 'thomas', 'sarah', 'charles', 'karen',
  'chris', 'nancy', 'daniel', 'lisa', 'matthew', 'emma', 'anthony', 'olivia', 'mark', 'sophia', 'paul',
  'ava', 'steven', 'mia', 'andrew', 'isabella', 'kevin', 'amelia', 'brian', 'chloe', 'lucas', 'noah',
  'liam', 'hannah', 'ahmed', 'fatima', 'mohammed', 'aisha', 'wei', 'li', 'hiroshi', 'yuki', 'raj',
  'priya', 'arjun', 'ananya', 'carlos', 'maria', 'jose', 'ana', 'juan', 'lucia', 'pierre', 'marie',
  'hans', 'anna', 'giulia', 'marco', 'olga', 'ivan', 'sven', 'ingrid', 'kwame', 'amara', 'chen', 'min',
  'jin', 'seo',
];
const LAST_NAMES = [
  'smith', 'johnson', 'williams', 'brown', 'jones', 'garcia', 'miller', 'davis', 'rodriguez', 'martinez',
  'hernandez', 'lopez', 'gonzalez', 'wilson', 'anderson', 'thomas', 'taylor', 'moore', 'jackson', 'martin',
  'lee', 'perez', 'thompson', 'white', 'harris', 'sanchez', 'clark', 'ramirez', 'lewis', 'robinson',
  'walker', 'young', 'allen', 'king', 'wright', 'scott', 'nguyen', 'hill', 'kim', 'patel', 'shah', 'singh',
  'kumar', 'wang', 'zhang', 'liu', 'chen', 'tanaka', 'suzuki', 'sato', 'muller', 'schmidt', 'schneider',
  'fischer', 'weber', 'dubois', 'moreau', 'rossi', 'russo', 'ferrari', 'silva', 'santos', 'oliveira',
  'souza', 'ivanov', 'petrov', 'kowalski', 'nowak', 'jansen', 'devries', 'larsen', 'hansen', 'nielsen',
  'okafor', 'mensah', 'obrien', 'murphy', 'kelly', 'walsh',
];
const NICKNAMES = [
  'dragon', 'sunny', 'coolcat', 'gamer', 'skater', 'ninja', 'rocket', 'tiger', 'angel', 'shadow', 'happy',
  'bluebird', 'lucky', 'starlight', 'wolf',
];
const ROLES = [
  'info', 'sales', 'support', 'admin', 'contact', 'hello', 'office', 'billing', 'noreply', 'no-reply', 'hr',
  'jobs', 'team', 'marketing', 'accounts', 'press', 'webmaster', 'postmaster', 'help', 'careers',
];
const TAGS = ['news', 'shop', 'spam', 'work', 'amazon', 'github', 'bank', 'promo', '2024'];

// Non-ASCII local parts (RFC 6531) and internationalized domain names.
const INTL_LOCALS = [
  'josé', 'müller', 'françois', 'søren', 'zoë', 'björn', 'łukasz', 'núñez', 'çelik', 'şahin', 'jürgen',
  'renée', '用户', '测试', '张伟', 'дмитрий', 'иван.петров', 'θεόδωρος', 'राम', 'ユーザー', '사용자', 'مستخدم',
  'jose\u0301', // decomposed (NFD) é
];
const IDN_DOMAINS = [
  'bücher.de', 'münchen.de', 'пример.рф', '例子.广告', 'españa.com', 'café.fr', '日本語.jp', 'straße.de',
  'zürich.ch', 'παράδειγμα.gr', '한국.kr', 'ツール.jp', 'xn--bcher-kva.de', 'xn--e1afmkfd.xn--p1ai',
  'mañana.com.mx', 'øl.no',
];

// ---------------------------------------------------------------------------------------------
// Generators

/** A few thousand company-like domains; the list order doubles as their popularity ranking. */
function companyDomains(rng, count, tlds = TLDS) {
  const seen = new Set();
  while (seen.size < count) {
    let name;
    const form = rng.next();
    if (form < 0.45) name = rng.pick(BRAND_HEADS) + (rng.chance(0.2) ? '-' : '') + rng.pick(BRAND_TAILS);
    else if (form < 0.75) name = Array.from({ length: 2 + rng.int(2) }, () => rng.pick(SYLLABLES)).join('');
    else if (form < 0.9) name = rng.pick(LAST_NAMES) + rng.pick(['', '-', 'and']) + rng.pick(BRAND_TAILS);
    else name = rng.pick(BRAND_HEADS) + rng.pick(SYLLABLES) + (rng.chance(0.3) ? rng.int(100) : '');
    let domain = `${name}.${typeof tlds === 'string' ? tlds : rng.pickWeighted(tlds)}`;
    if (rng.chance(0.05)) domain = `${rng.pick(SUBDOMAINS)}.${domain}`;
    seen.add(domain);
  }
  return [...seen];
}

const year = (rng) => String(1960 + rng.int(50));
const digits = (rng) => (rng.chance(0.5) ? year(rng) : String(rng.int(rng.chance(0.5) ? 100 : 1000)));
const capitalize = (s) => s[0].toUpperCase() + s.slice(1);

// Common shapes of personal local parts, weighted by how often they occur.
const LOCAL_SHAPES = weighted([
  [(f, l) => `${f}.${l}`, 30],
  [(f, l) => `${f[0]}${l}`, 12],
  [(f, l) => `${f}${l}`, 8],
  [(f, l, rng) => `${f}${digits(rng)}`, 8],
  [(f, l, rng) => `${f}_${l}${digits(rng)}`, 6],
  [(f, l, rng) => `${f}.${l}${digits(rng)}`, 5],
  [(f, l) => `${f[0]}.${l}`, 5],
  [(f) => f, 5],
  [(f, l, rng) => `${rng.pick(NICKNAMES)}${digits(rng)}`, 5],
  [(f, l, rng) => `${rng.chance(0.5) ? f : `${f}.${l}`}+${rng.pick(TAGS)}`, 4],
  [(f, l) => `${l}.${f}`, 3],
  [(f, l) => `${f}-${l}`, 3],
]);

function plainAddress(rng, companies) {
  // Role accounts live at companies; people use both providers and work domains.
  if (rng.chance(0.06)) return `${rng.pick(ROLES)}@${rng.pickSkewed(companies)}`;
  const first = rng.pick(FIRST_NAMES);
  const last = rng.pick(LAST_NAMES);
  let local = rng.pickWeighted(LOCAL_SHAPES)(first, last, rng);
  if (rng.chance(0.05)) local = local.split('.').map(capitalize).join('.'); // "John.Smith"
  const domain = rng.chance(0.55) ? rng.pickWeighted(PROVIDERS) : rng.pickSkewed(companies);
  return `${local}@${domain}`;
}

/** Inserts `text` at a random index of `s` strictly inside [from, to). */
function insertAt(rng, s, from, to, text) {
  const i = from + rng.int(Math.max(1, to - from));
  return s.slice(0, i) + text + s.slice(i);
}

// Typing and copy-paste mistakes applied to a plain address `a` (local@domain).
const TYPOS = [
  (a) => a.replace('@', ''), // missing @
  (a) => a.replace('@', '@@'), // double @
  (a, rng) => `${a}@${rng.pickWeighted(PROVIDERS)}`, // two addresses run together
  (a, rng) => (a.indexOf('.') < a.indexOf('@') ? a.replace('.', '..') : insertAt(rng, a, 1, a.indexOf('@'), '..')),
  (a) => a.replace(/\.(?=[^.]*$)/, '..'), // double dot in the domain ("gmail..com")
  (a) => a.replace('@', '.@'), // trailing dot in the local part
  (a) => `${a}.`, // trailing dot after the domain
  (a) => `.${a}`, // leading dot
  (a, rng) => insertAt(rng, a, 1, a.indexOf('@'), ' '), // space inside the local part
  (a) => a.replace('@', ' @'), // space before @
  (a) => a.replace(/\.(?=[^.]*$)/, ','), // comma for dot in the domain ("gmail,com")
  (a, rng) => insertAt(rng, a, 1, a.indexOf('@'), ','), // comma in the local part
  (a) => a.slice(a.indexOf('@')), // empty local part
  (a) => a.slice(0, a.indexOf('@') + 1), // empty domain
  (a) => `mailto:${a}`,
  (a) => `<${a}>`,
  (a) => `John Smith <${a}>`,
  (a) => a.replace('@', '@-'), // label starting with a hyphen
  (a) => a.replace('@', ';'), // ; typed for @
];

function typoAddress(rng, companies) {
  return rng.pick(TYPOS)(plainAddress(rng, companies), rng);
}

function internationalAddress(rng, companies) {
  const r = rng.next();
  const localAscii = () => `${rng.pick(FIRST_NAMES)}.${rng.pick(LAST_NAMES)}`;
  const domainAscii = () => (rng.chance(0.6) ? rng.pickWeighted(PROVIDERS) : rng.pickSkewed(companies));
  if (r < 0.4) return `${rng.pick(INTL_LOCALS)}@${domainAscii()}`;
  if (r < 0.75) return `${localAscii()}@${rng.pick(IDN_DOMAINS)}`;
  return `${rng.pick(INTL_LOCALS)}@${rng.pick(IDN_DOMAINS)}`;
}

const letters = (rng, n) => Array.from({ length: n }, () => String.fromCharCode(97 + rng.int(26))).join('');

// Legal-but-unusual and near-limit forms; some are invalid on purpose (65-char local part, bad literal).
const EDGES = [
  (d) => `"john doe"@${d}`,
  (d) => `"john..doe"@${d}`,
  (d) => `"john@home"@${d}`,
  (d) => `"quote\\"d"@${d}`,
  (d) => `""@${d}`,
  () => 'postmaster@[192.0.2.1]',
  () => 'john@[198.51.100.7]',
  () => 'john@[IPv6:2001:db8::1]',
  () => 'john@[300.1.1.1]',
  (d) => `john(work)@${d}`,
  (d) => `(comment)john@${d}`,
  (d) => `john@(comment)${d}`,
  (d) => `john@${d}(comment)`,
  (d, rng) => `${letters(rng, 64)}@${d}`, // local part at the 64-octet limit
  (d, rng) => `${letters(rng, 65)}@${d}`, // one over
  (d, rng) => `${letters(rng, 20)}.${letters(rng, 20)}.${letters(rng, 20)}@${d}`,
  (d, rng) => `john@${letters(rng, 63)}.com`, // label at the 63-octet limit
  (d, rng) => `john@${letters(rng, 64)}.com`, // one over
  (d, rng) => `${letters(rng, 60)}@${letters(rng, 60)}.${letters(rng, 60)}.${letters(rng, 60)}.com`, // ~250
  (d) => `!#$%&'*+/=?^_\`{|}~@${d}`,
  (d) => `a@${d}`,
  (d) => `user%host@${d}`,
  (d) => `JOHN.SMITH@${d.toUpperCase()}`,
  () => 'john@localhost',
];

function edgeAddress(rng, companies) {
  const domain = rng.chance(0.5) ? rng.pickWeighted(PROVIDERS) : rng.pickSkewed(companies);
  return rng.pick(EDGES)(domain, rng);
}

/**
 * "realistic": mostly valid addresses with typos, internationalized and edge forms mixed in. `companies` is the
 * number of generated company domains (their popularity is skewed, so a few get most addresses and the last ones
 * few or none); `mix` the shares of the kinds.
 */
export function realisticCorpus(
  size = CORPUS_SIZE,
  seed = SEED,
  { companies: companyCount = 3000, mix = REALISTIC_MIX } = {},
) {
  const rng = new Rng(seed);
  const companies = companyDomains(rng, companyCount);
  const kinds = [
    [typoAddress, Math.round(size * mix.typo)],
    [internationalAddress, Math.round(size * mix.international)],
    [edgeAddress, Math.round(size * mix.edge)],
  ];
  const out = [];
  for (const [make, count] of kinds) for (let i = 0; i < count; i++) out.push(make(rng, companies));
  while (out.length < size) out.push(plainAddress(rng, companies));
  return rng.shuffle(out); // spread the kinds evenly so no pass section is all one kind
}

/** Shares of the larger corpora: a list with a few more internationalized addresses. */
export const LARGE_MIX = { plain: 0.84, typo: 0.08, international: 0.05, edge: 0.03 };

/**
 * "realistic200k": the realistic mix over 200,000 addresses and some 13,400 distinct domain parts (10,000
 * generated company domains, of which the skewed picks reach most, plus providers, typo and edge forms), 5%
 * internationalized. Per-domain caches and branch predictors see the spread of a real list rather than a few
 * thousand domains over and over.
 */
export function realistic200kCorpus(size = 200_000, seed = SEED + 2) {
  return realisticCorpus(size, seed, { companies: 10_000, mix: LARGE_MIX });
}

/** "simple-valid": plain first.last@company.com addresses only (the fast path of every validator). */
export function simpleValidCorpus(size = CORPUS_SIZE, seed = SEED + 1) {
  const rng = new Rng(seed);
  const companies = companyDomains(rng, 2000, 'com');
  return Array.from(
    { length: size },
    () => `${rng.pick(FIRST_NAMES)}.${rng.pick(LAST_NAMES)}@${rng.pickSkewed(companies)}`,
  );
}

export const CORPORA = {
  realistic: realisticCorpus,
  realistic200k: realistic200kCorpus,
  'simple-valid': simpleValidCorpus,
};

export function getCorpus(name) {
  const make = CORPORA[name];
  if (!make) throw new Error(`unknown corpus "${name}" (known: ${Object.keys(CORPORA).join(', ')})`);
  // Addresses reach a verifier as text (a file, a request body), i.e. as flat strings. Built here by
  // concatenation they would be V8 ropes, which every character read has to walk; a text round trip
  // gives every implementation the strings it would get in practice.
  return JSON.parse(JSON.stringify(make()));
}

// Run as a script (not imported, nor bundled into another script).
if (import.meta.url.endsWith('/corpus.mjs') && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.on('error', () => process.exit(0)); // `| head` closing the pipe is not an error
  process.stdout.write(`${getCorpus(process.argv[2] ?? 'realistic').join('\n')}\n`);
}
