// Look-alike domains: UTS #39 skeletons from the confusables data, the suggestion a homograph of a common domain gets,
// and the mixed-script labels the entry's hasMixedScriptDomainName reports.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { createVerifier } from '../../packages/mailverify/src/index.js';
import { asciiLookAlikeKey, asciiLookAlikes, isMixedScriptDomain, isMixedScriptLabel, skeleton } from '../../packages/mailverify/src/suggest/look-alike.js';
import { createSuggester } from '../../packages/mailverify/src/suggest/suggest.js';
import { parseAddress } from '../../packages/mailverify/src/syntax/parse.js';
import { commonDomains, unrelatedDomains } from './measure.js';

const suggester = createSuggester();
const ascii = (domain: string): string => {
  const parsed = parseAddress(`jane.doe@${domain}`);
  if (!parsed.ok) throw new Error(`${domain}: ${parsed.status}`);
  return parsed.asciiDomainPart;
};
const suggest = (domain: string): string[] => suggester.suggest('jane', ascii(domain));

describe('skeleton', () => {
  it('maps confusables to their prototype (UTS #39 §4)', () => {
    expect(skeleton('gm\u0430il.com')).toBe(skeleton('gmail.com')); // Cyrillic а
    expect(skeleton('\u0443\u0430\u04bb\u043e\u043e.com')).toBe(skeleton('yahoo.com')); // уаһоо, all Cyrillic
    expect(skeleton('\u0261mail.com')).toBe(skeleton('gmail.com')); // Latin script g
    expect(skeleton('rnsn.com')).toBe(skeleton('msn.com'));
    expect(skeleton('gmail.com')).not.toBe(skeleton('gmall.com'));
  });

  it('agrees with the LDH key: among [a-z0-9.-] only m, 1 and 0 have other prototypes, and no prototype is O', () => {
    const data = createRequire(import.meta.url)('unhomoglyph/data.json') as Record<string, string>;
    const changed = [...'abcdefghijklmnopqrstuvwxyz0123456789.-'].filter((c) => skeleton(c) !== c);
    expect(changed.sort()).toEqual(['0', '1', 'm']);
    expect(data['0']).toBe('O');
    for (const c of 'abcdefghijklmnopqrstuvwxyz123456789.-') expect(skeleton(c)).not.toContain('O');
    const domains = [...commonDomains(), ...unrelatedDomains(), 'rnsn.com', 'hotrnail.com', 'gmai1.com', 'l63.com', 'intemode.on.net'];
    const bySkeleton = new Map<string, string>();
    const byKey = new Map<string, string>();
    for (const domain of domains) {
      const [s, k] = [skeleton(domain), asciiLookAlikeKey(domain)];
      // Equal skeletons exactly when equal keys.
      expect(bySkeleton.get(s) === undefined, domain).toBe(byKey.get(k) === undefined);
      if (bySkeleton.has(s)) expect(asciiLookAlikeKey(bySkeleton.get(s)!)).toBe(k);
      bySkeleton.set(s, domain);
      byKey.set(k, domain);
    }
  });

  it('lists every LDH string with the same skeleton', () => {
    const variants = asciiLookAlikes('gmail.com');
    expect(variants).toHaveLength(8); // two m, one l
    expect(variants).toEqual(expect.arrayContaining(['gmail.com', 'grnail.com', 'gmai1.com', 'gmail.corn', 'grnai1.corn']));
    for (const variant of variants) expect(skeleton(variant)).toBe(skeleton('gmail.com'));
    expect(asciiLookAlikes('internode.on.net')).toEqual(expect.arrayContaining(['intemode.on.net', 'internode.on.net']));
    expect(asciiLookAlikes('stripe.io')).toEqual(['stripe.io']);
  });
});

describe('a look-alike of a common domain', () => {
  it.each([
    ['gm\u0430il.com', 'gmail.com'], // Cyrillic а
    ['xn--gmil-63d.com', 'gmail.com'], // the same, as an A-label
    ['\u0443\u0430\u04bb\u043e\u043e.com', 'yahoo.com'], // whole-script Cyrillic
    ['h\u043etmail.com', 'hotmail.com'], // Cyrillic о
    ['\u0261mail.com', 'gmail.com'],
    ['\u03bfutlook.com', 'outlook.com'], // Greek ο
    ['rnsn.com', 'msn.com'], // r and n for m
    ['hotrnail.co.uk', 'hotmail.co.uk'],
    ['l63.com', '163.com'],
  ])('%s gets %s alone', (domain, intended) => {
    expect(suggest(domain)).toEqual([`jane@${intended}`]);
    expect(suggester.lookAlike('jane', ascii(domain))).toEqual([`jane@${intended}`]);
  });

  it('is not the domain itself, nor a well-known one, nor an international name that looks like none', () => {
    for (const domain of ['gmail.com', 'mail.ru', 'outlook.live.com', 'b\u00fccher.de', '\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444', 'stripe.com']) {
      expect(suggester.lookAlike('jane', ascii(domain)), domain).toEqual([]);
    }
    expect(suggest('b\u00fccher.de')).toEqual([]);
  });

  it('is suggested by the engine, whatever the status, with the flag for a mixed-script label', async () => {
    const entry = await createVerifier({ checks: 'syntax' }).verify('jane@gm\u0430il.com');
    expect(entry).toMatchObject({ status: 'Success', suggestions: ['jane@gmail.com'], hasMixedScriptDomainName: true });
    const wholeScript = await createVerifier({ checks: 'syntax' }).verify('jane@\u0443\u0430\u04bb\u043e\u043e.com');
    expect(wholeScript.suggestions).toEqual(['jane@yahoo.com']);
    expect(wholeScript.hasMixedScriptDomainName).toBeUndefined(); // one script: a look-alike, but not mixed
    const off = await createVerifier({ checks: 'syntax', suggestions: false }).verify('jane@gm\u0430il.com');
    expect(off.suggestions).toBeUndefined();
    expect(off.hasMixedScriptDomainName).toBe(true);
  });
});

describe('mixed-script labels (UTS #39 §5.1, Latin with East Asian scripts as §5.2 Highly Restrictive allows)', () => {
  it.each([
    ['gm\u0430il', true], // Latin and Cyrillic
    ['p\u0430ypal', true],
    ['\u03b1\u0431', true], // Greek and Cyrillic
    ['\u0443\u0430\u04bb\u043e\u043e', false], // Cyrillic alone
    ['b\u00fccher', false], // Latin with a diacritic
    ['caf\u0065\u0301', false], // a combining mark (Inherited) goes with any script
    ['mail-2024', false],
    ['sony\u30bd\u30cb\u30fc', false], // Latin and Katakana (with the prolonged sound mark, Hiragana or Katakana)
    ['\u6771\u4eac\u3068\u3046\u304d\u3087\u3046', false], // Han and Hiragana: Japanese
    ['abc\u4e2d\u6587', false], // Latin and Han
    ['\ud55c\uad6d\u4e2d', false], // Hangul and Han: Korean
    ['\u0430\u4e2d', true], // Cyrillic and Han
    ['\u30bd\ud55c', true], // Katakana and Hangul
  ])('%s: %s', (label, mixed) => {
    expect(isMixedScriptLabel(label)).toBe(mixed);
  });

  it('are found in any label of the domain, from its A-labels', () => {
    expect(isMixedScriptDomain('xn--gmil-63d.com')).toBe(true);
    expect(isMixedScriptDomain(ascii('mail.gm\u0430il.com'))).toBe(true);
    expect(isMixedScriptDomain(ascii('\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444'))).toBe(false);
    expect(isMixedScriptDomain('gmail.com')).toBe(false);
  });
});
