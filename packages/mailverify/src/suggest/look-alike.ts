/**
 * Look-alike domains (docs/verification.md#lists-flags-and-suggestions): Unicode confusables and mixed-script labels,
 * after UTS #39 (Unicode Security Mechanisms, https://www.unicode.org/reports/tr39/).
 *
 * - skeleton(): UTS #39 §4, NFD, each character replaced by its prototype from the confusables data, NFD again. Two
 *   strings look alike when their skeletons are equal (`gmаil.com` with a Cyrillic а, `rnsn.com`, `gmail.com`). The
 *   data is confusables.txt as published by the `unhomoglyph` package (data.json, Unicode 13.0.0), read on first use.
 * - Mixed scripts: UTS #39 §5.1, a label whose resolved script set is empty (no one script holds every character but
 *   those of Common and Inherited), Han with Hiragana and Katakana counted as one script (Japanese), with Bopomofo
 *   (Chinese) or with Hangul (Korean), as the augmented script sets of §5.1 do. Latin beside one of those is allowed,
 *   as the Highly Restrictive level of §5.2 allows it.
 */
import { createRequire } from 'node:module';
import { detached, toUnicodeDomain } from '../syntax/idna.js';

/** The confusables' prototypes, by source character; null until first needed. */
let prototypes: ReadonlyMap<string, string> | null = null;

function confusables(): ReadonlyMap<string, string> {
  if (prototypes === null) {
    const data = createRequire(import.meta.url)('unhomoglyph/data.json') as Record<string, string>;
    prototypes = new Map(Object.entries(data));
  }
  return prototypes;
}

/** The UTS #39 skeleton of a string. */
export function skeleton(text: string): string {
  const map = confusables();
  let out = '';
  for (const character of text.normalize('NFD')) out += map.get(character) ?? character;
  return out.normalize('NFD');
}

/**
 * The same key for two lower-case LDH strings exactly when their skeletons are equal, without the data: among
 * [a-z0-9.-] only `m` (→ `rn`), `1` (→ `l`) and `0` (→ `O`) have other prototypes (a test checks it against the data),
 * and no lower-case LDH string has an `O`, so `0` can be left as it is.
 */
export function asciiLookAlikeKey(domain: string): string {
  return domain.replaceAll('rn', 'm').replaceAll('1', 'l');
}

/** Most ways of writing one key among LDH strings: a longer key's variants are not listed. */
const MOST_VARIANTS = 1024;

/**
 * Every LDH string with the same key as `domain` (so the same skeleton), itself included: each `m` of the key also
 * written `rn`, each `l` also `1` (`gmail.com`: `grnail.com`, `gmai1.com`, `gmail.corn`, ...).
 */
export function asciiLookAlikes(domain: string): string[] {
  let variants = [''];
  for (const c of asciiLookAlikeKey(domain)) {
    const ways = c === 'm' ? ['m', 'rn'] : c === 'l' ? ['l', '1'] : [c];
    if (variants.length * ways.length > MOST_VARIANTS) return [domain];
    variants = variants.flatMap((start) => ways.map((way) => start + way));
  }
  return variants;
}

const CACHE_LIMIT = 4096;

export function hasALabel(asciiDomain: string): boolean {
  return asciiDomain.startsWith('xn--') || asciiDomain.includes('.xn--');
}

// --- Scripts. ---

/**
 * The values of the Unicode Script property (ISO 15924 codes, Unicode PropertyValueAliases.txt, `sc`, Unicode 17.0)
 * but Common (Zyyy), Inherited (Zinh) and Unknown (Zzzz); those the running Node.js does not know are skipped.
 */
const SCRIPT_CODES =
  'Adlm Aghb Ahom Arab Armi Armn Avst Bali Bamu Bass Batk Beng Bhks Bopo Brah Brai Bugi Buhd Cakm Cans Cari Cham ' +
  'Cher Chrs Copt Cpmn Cprt Cyrl Deva Diak Dogr Dsrt Dupl Egyp Elba Elym Ethi Gara Geor Glag Gong Gonm Goth Gran Grek ' +
  'Gujr Gukh Guru Hang Hani Hano Hatr Hebr Hira Hluw Hmng Hmnp Hung Ital Java Kali Kana Kawi Khar Khmr Khoj Kits Knda ' +
  'Krai Kthi Lana Laoo Latn Lepc Limb Lina Linb Lisu Lyci Lydi Mahj Maka Mand Mani Marc Medf Mend Merc Mero Mlym Modi ' +
  'Mong Mroo Mtei Mult Mymr Nagm Nand Narb Nbat Newa Nkoo Nshu Ogam Olck Onao Orkh Orya Osge Osma Ougr Palm Pauc Perm ' +
  'Phag Phli Phlp Phnx Plrd Prti Rjng Rohg Runr Samr Sarb Saur Sgnw Shaw Shrd Sidd Sind Sinh Sogd Sogo Sora Soyo Sund ' +
  'Sunu Sylo Syrc Tagb Takr Tale Talu Taml Tang Tavt Telu Tfng Tglg Thaa Thai Tibt Tirh Tnsa Todr Toto Tutg Ugar Vaii ' +
  'Vith Wara Wcho Xpeo Xsux Yezi Yiii Zanb';

let scriptTests: readonly (readonly [code: string, test: RegExp])[] | null = null;

function scripts(): readonly (readonly [string, RegExp])[] {
  scriptTests ??= SCRIPT_CODES.split(' ').flatMap((code) => {
    try {
      return [[code, new RegExp(`^\\p{Script_Extensions=${code}}$`, 'u')] as const];
    } catch {
      return []; // a script newer than this Node.js's Unicode
    }
  });
  return scriptTests;
}

const COMMON_OR_INHERITED = /^[\p{Script_Extensions=Common}\p{Script_Extensions=Inherited}]$/u;

/** UTS #39 §5.1 augmented script sets: Han, Hiragana, Katakana, Bopomofo and Hangul stand for the writing systems. */
const AUGMENTED: Readonly<Record<string, readonly string[]>> = {
  Hani: ['Hani', 'Hanb', 'Jpan', 'Kore'],
  Hira: ['Hira', 'Jpan'],
  Kana: ['Kana', 'Jpan'],
  Bopo: ['Bopo', 'Hanb'],
  Hang: ['Hang', 'Kore'],
};

const characterScripts = new Map<string, readonly string[]>();

/** A character's augmented Script_Extensions; null for Common and Inherited (they go with any script). */
function scriptsOf(character: string): readonly string[] | null {
  if (COMMON_OR_INHERITED.test(character)) return null;
  let found = characterScripts.get(character);
  if (found === undefined) {
    found = scripts()
      .filter(([, test]) => test.test(character))
      .flatMap(([code]) => AUGMENTED[code] ?? [code]);
    if (found.length === 0) found = ['Zzzz']; // unassigned: a script of its own
    if (characterScripts.size >= CACHE_LIMIT) characterScripts.clear();
    characterScripts.set(character, found);
  }
  return found;
}

/** The writing systems Latin may be mixed with in one label (UTS #39 §5.2, Highly Restrictive). */
const WITH_LATIN = ['Jpan', 'Hanb', 'Kore'];

/** Whether a label mixes scripts (UTS #39 §5.1, with the combinations of Latin that §5.2's Highly Restrictive allows). */
export function isMixedScriptLabel(label: string): boolean {
  let resolved: string[] | null = null;
  let withoutLatin: string[] | null = null;
  for (const character of label) {
    const own = scriptsOf(character);
    if (own === null) continue;
    resolved = resolved === null ? [...own] : resolved.filter((code) => own.includes(code));
    if (!own.includes('Latn')) withoutLatin = withoutLatin === null ? [...own] : withoutLatin.filter((code) => own.includes(code));
  }
  if (resolved === null || resolved.length > 0) return false;
  // Latin with one of the writing systems of East Asia: the label is mixed unless the rest has one of them.
  return !(withoutLatin !== null && withoutLatin.some((code) => WITH_LATIN.includes(code)));
}

const mixedDomains = new Map<string, boolean>();

/** Whether a label of the domain (lower-case A-labels, as ParsedAddress.asciiDomainPart) mixes scripts. */
export function isMixedScriptDomain(asciiDomain: string): boolean {
  if (!hasALabel(asciiDomain)) return false; // LDH labels: Latin letters, and digits and hyphens (Common)
  let mixed = mixedDomains.get(asciiDomain);
  if (mixed === undefined) {
    mixed = toUnicodeDomain(asciiDomain).split('.').some(isMixedScriptLabel);
    if (mixedDomains.size >= CACHE_LIMIT) mixedDomains.clear();
    mixedDomains.set(detached(asciiDomain), mixed);
  }
  return mixed;
}
