import { describe, expect, it } from 'vitest';
import { COMMON_DOMAINS, COMMON_SUFFIXES, PROVIDER_VARIANTS } from '../../packages/mailverify/src/suggest/common-domains.js';
import { createSuggester, singleEdit } from '../../packages/mailverify/src/suggest/suggest.js';

const suggester = createSuggester();
const suggest = (domain: string, localPart = 'jane'): string[] => suggester.suggest(localPart, domain);

describe('the issue\'s examples', () => {
  it.each([
    ['gmial.com', 'gmail.com'],
    ['gmail.co', 'gmail.com'],
    ['hotmail.con', 'hotmail.com'],
    ['yaho.com', 'yahoo.com'],
    ['outlok.com', 'outlook.com'],
  ])('%s → %s, and nothing else', (typo, domain) => {
    expect(suggest(typo)).toEqual([`jane@${domain}`]);
  });
});

describe('second-level typos', () => {
  it.each([
    ['gamil.com', 'gmail.com'], // swap
    ['gmai.com', 'gmail.com'], // dropped letter
    ['gmaill.com', 'gmail.com'], // doubled letter
    ['gmaik.com', 'gmail.com'], // neighbouring key
    ['hotmial.com', 'hotmail.com'],
    ['hotamil.com', 'hotmail.com'],
    ['iclod.com', 'icloud.com'],
    ['yahooo.com', 'yahoo.com'],
    ['sbcgloabl.net', 'sbcglobal.net'],
    ['t-onlien.de', 't-online.de'],
    ['aoll.com', 'aol.com'], // short names take an added letter
    ['lvie.com', 'live.com'], // and, from four letters, a swap
    ['yahoo.co.ul', 'yahoo.co.uk'],
  ])('%s → %s', (typo, domain) => {
    expect(suggest(typo)[0]).toBe(`jane@${domain}`);
  });

  it('take a slip in the first letter only in long names, a neighbouring key or a dropped letter of a big provider', () => {
    expect(suggest('otmail.com')).toEqual(['jane@hotmail.com']);
    expect(suggest('cloud.com')).toEqual([]); // a real company, one slip from icloud.com
    expect(suggest('tahoo.com')).toEqual(['jane@yahoo.com']); // t is next to y
    expect(suggest('hmail.com')).toEqual(['jane@gmail.com']);
    expect(suggest('qmail.com')).toEqual([]); // q is far from g
    expect(suggest('ahoo.com')).toEqual(['jane@yahoo.com']);
    expect(suggest('andex.ru')).toEqual(['jane@yandex.ru']);
    expect(suggest('aver.com')).toEqual([]); // a real company, naver.com without its n: too rare a provider
  });

  it('go by the name for the first letter, whatever the suffix, and take it in common six-letter names', () => {
    expect(suggest('tahoo.co.uk')).toEqual(['jane@yahoo.co.uk']); // yahoo is a dominant name on any suffix
    expect(suggest('ahoo.co.uk')).toEqual(['jane@yahoo.co.uk']);
    expect(suggest('kibero.it')).toEqual(['jane@libero.it']); // k is next to l
    expect(suggest('tandex.ru')).toEqual(['jane@yandex.ru']);
    expect(suggest('ibero.it')).toEqual(['jane@libero.it']); // the rest starts with a vowel
    expect(suggest('ogers.com')).toEqual(['jane@rogers.com']);
    expect(suggest('range.fr')).toEqual([]); // a word: the rest starts with a consonant
    expect(suggest('zibero.it')).toEqual([]); // z is far from l
    expect(suggest('inline.de')).toEqual([]); // online.de is too rare a name
  });

  it('take a letter far from the one meant in a short name only inside it, for a vowel, or typed twice', () => {
    expect(suggest('gmeil.com')).toEqual(['jane@gmail.com']);
    expect(suggest('yahho.com')).toEqual(['jane@yahoo.com']);
    expect(suggest('gmaxl.com')).toEqual(['jane@gmail.com']);
    expect(suggest('grail.com')).toEqual([]); // a real company
    expect(suggest('libera.it')).toEqual([]); // a real association, libero.it's last letter changed
  });

  it('take two slips in the name of gmail, yahoo and hotmail when they are slips of the hand', () => {
    expect(suggest('gimal.com')).toEqual(['jane@gmail.com']); // a letter moved
    expect(suggest('hotlamil.com')).toEqual(['jane@hotmail.com']);
    expect(suggest('gml.com')).toEqual(['jane@gmail.com']);
    expect(suggest('hoynail.com')).toEqual(['jane@hotmail.com']); // two neighbouring keys
    expect(suggest('gmial.co')).toEqual(['jane@gmail.com']); // one in the name, one a typo form of the suffix
    expect(suggest('gmac.com')).toEqual([]); // real names two slips away
    expect(suggest('hotmart.com')).toEqual([]);
    expect(suggest('yahoofs.com')).toEqual([]); // two letters added make a longer name
    expect(suggest('outlok.com')).toEqual(['jane@outlook.com']); // one slip still wins
  });

  it('take a common domain with its suffix typed twice', () => {
    expect(suggest('gmail.com.com')).toEqual(['jane@gmail.com']);
    expect(suggest('hotmail.co.uk.co.uk')).toEqual(['jane@hotmail.co.uk']);
    expect(suggest('gmail.com.br')).toEqual([]);
  });

  it('correct a dot slip', () => {
    expect(suggest('gmailc.om')).toEqual(['jane@gmail.com']);
    expect(suggest('gmai.lcom')).toEqual(['jane@gmail.com']);
    expect(suggest('gmail.c.om')).toEqual(['jane@gmail.com']);
  });
});

describe('top-level typos', () => {
  it.each([
    ['yahoo.cm', 'yahoo.com'],
    ['gmail.om', 'gmail.com'],
    ['outlook.cmo', 'outlook.com'],
    ['comcast.ne', 'comcast.net'],
    ['verizon.nte', 'verizon.net'],
    ['hotmail.co.ul', 'hotmail.co.uk'],
    ['wanadoo.f', 'wanadoo.fr'],
    ['web.dee', 'web.de'],
    ['uol.com.rb', 'uol.com.br'],
    ['163.con', '163.com'],
    ['aol.co', 'aol.com'], // a listed typo form on a short name
    ['gmail.c', 'gmail.com'], // the rest of .com dropped
    ['hotmail.c', 'hotmail.com'],
  ])('%s → %s', (typo, domain) => {
    expect(suggest(typo)[0]).toBe(`jane@${domain}`);
  });

  it('fix a suffix that cannot exist on any name, and a second slip in a long common name', () => {
    expect(suggest('stripe.con')).toEqual(['jane@stripe.com']);
    expect(suggest('acme.ogr')).toEqual(['jane@acme.org']);
    expect(suggest('acme.co.ul')).toEqual(['jane@acme.co.uk']);
    expect(suggest('hotmal.con')).toEqual(['jane@hotmail.com']);
  });

  it('never move a real suffix of an unknown name (`example.co` is not `example.com`)', () => {
    for (const domain of ['example.co', 'stripe.co', 'acme.cm', 'acme.om', 'acme.net', 'stripe.io']) expect(suggest(domain)).toEqual([]);
  });

  it('leave a real ccTLD of a short common name alone unless it is a listed typo form', () => {
    expect(suggest('home.pl')).toEqual([]); // home.nl is common, home.pl a Polish company
    expect(suggest('web.be')).toEqual([]);
  });
});

describe('no suggestion', () => {
  it('for a well-known domain', () => {
    const known = [
      ...COMMON_DOMAINS.flatMap((group) => group.domains.map(([domain]) => domain)),
      ...PROVIDER_VARIANTS.flatMap((group) => group.names),
    ];
    for (const domain of known) expect(suggest(domain), domain).toEqual([]);
    for (const domain of ['gmx.com', 'mail.com', 'email.com', 'yahoo.co.jp', 'hotmail.dk', 'outlook.de']) {
      expect(suggester.isWellKnown(domain), domain).toBe(true);
    }
  });

  it('for a host under a well-known domain', () => {
    for (const domain of ['outlook.live.com', 'mail.yahoo.com', 'folha.uol.com.br', 'g.mail.com']) {
      expect(suggester.isWellKnown(domain), domain).toBe(true);
      expect(suggest(domain), domain).toEqual([]);
    }
  });

  it('for real company domains, short ones and ones a slip from a mailbox domain included', () => {
    const companies = [
      'stripe.com', 'example.com', 'example.co', 'ms.com', 'gm.com', 'gmc.com', 'aon.com', 'ao.com', 'al.com', 'ami.com',
      'aig.com', 'max.com', 'mic.com', 'qz.com', 'qa.com', 'cloud.com', 'life.com', 'note.com', 'mil.ru', 'mai.ru',
      'vk.ru', 'tim.it', 'home.pl', 'bol.com', 'web.com', 'box.com', 'fox.com', 'orange.com', 'virgin.com', 'hotjar.com',
      'hotels.com', 'hotmart.com', 'msnbc.com', 'sky.de', 'wdr.de', 'gazeta.ru', 'telekom.de', 'github.io',
    ];
    for (const domain of companies) {
      expect(suggest(domain), domain).toEqual([]);
      expect(suggester.isWellKnown(domain), domain).toBe(false);
    }
  });
});

describe('the result', () => {
  it('keeps the local part as written', () => {
    expect(suggester.suggest('Jane.DOE+News', 'gmial.com')).toEqual(['Jane.DOE+News@gmail.com']);
    expect(suggester.suggest('"john smith"', 'hotmail.con')).toEqual(['"john smith"@hotmail.com']);
  });

  it('has at most 3 addresses, best first', () => {
    // Four common domains one equally costly slip from the typo, with equal weights.
    const tied = createSuggester({ domains: [['qwertyab.com', 1], ['qwertyac.com', 1], ['qwertyad.com', 1], ['qwertyae.com', 1]] });
    expect(tied.suggest('x', 'qwertyaz.con')).toHaveLength(3);
    expect(tied.suggest('x', 'qwertyaz.com')).toHaveLength(3);
    expect(createSuggester({ domains: [['qwertyab.com', 1], ['qwertyac.com', 1]], maxSuggestions: 1 }).suggest('x', 'qwertyaz.com')).toHaveLength(1);
  });

  it('ranks a neighbouring key before a distant one, and the popular domain before a rare one', () => {
    const keys = createSuggester({ domains: [['keyboardm.com', 1], ['keyboardq.com', 1]] });
    expect(keys.suggest('x', 'keyboardn.com')).toEqual(['x@keyboardm.com']); // n is next to m, far from q
    const popular = createSuggester({ domains: [['keyboardm.com', 10], ['keyboardq.com', 10000]] });
    expect(popular.suggest('x', 'keyboardz.com')[0]).toBe('x@keyboardq.com');
    expect(suggest('yahoo.cm')[0]).toBe('jane@yahoo.com'); // before yahoo.ca
  });
});

describe('options', () => {
  it('domains replaces the table of suggestion targets', () => {
    const custom = createSuggester({ domains: [['example-mail.org', 1]] });
    expect(custom.suggest('x', 'exmaple-mail.org')).toEqual(['x@example-mail.org']);
    expect(custom.suggest('x', 'gmial.com')).toEqual([]);
    expect(custom.isWellKnown('example-mail.org')).toBe(true);
  });

  it('wellKnown adds domains that are never corrected', () => {
    const custom = createSuggester({ wellKnown: ['gmial.com'] });
    expect(custom.suggest('x', 'gmial.com')).toEqual([]);
    expect(custom.isWellKnown('gmial.com')).toBe(true);
  });
});

describe('the data', () => {
  it('has about 200 common domains, each once, with a positive weight and a source per group', () => {
    const rows = COMMON_DOMAINS.flatMap((group) => group.domains);
    expect(rows.length).toBeGreaterThanOrEqual(200);
    expect(new Set(rows.map(([domain]) => domain)).size).toBe(rows.length);
    for (const [, weight] of rows) expect(weight).toBeGreaterThan(0);
    for (const group of [...COMMON_DOMAINS, ...PROVIDER_VARIANTS]) expect(group.source.length).toBeGreaterThan(20);
  });

  it('keeps the provider variants apart from the common domains', () => {
    const common = new Set(COMMON_DOMAINS.flatMap((group) => group.domains.map(([domain]) => domain)));
    for (const name of PROVIDER_VARIANTS.flatMap((group) => group.names)) expect(common.has(name), name).toBe(false);
    expect(new Set(COMMON_SUFFIXES.map(([suffix]) => suffix)).size).toBe(COMMON_SUFFIXES.length);
  });
});

describe('singleEdit', () => {
  it('finds the one slip, or none', () => {
    expect(singleEdit('gmial.com', 'gmail.com')).toMatchObject({ kind: 'transpose', at: 2 });
    expect(singleEdit('gmai.com', 'gmail.com')).toMatchObject({ kind: 'delete', at: 4, intended: 'l' });
    expect(singleEdit('gmaill.com', 'gmail.com')).toMatchObject({ kind: 'insert', typed: 'l' });
    expect(singleEdit('gmaik.com', 'gmail.com')).toMatchObject({ kind: 'substitute', at: 4, typed: 'k', intended: 'l' });
    expect(singleEdit('gmail.com', 'gmail.com')).toBeNull();
    expect(singleEdit('gmal.con', 'gmail.com')).toBeNull();
  });
});
