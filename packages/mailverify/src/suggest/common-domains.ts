/**
 * The data behind typo suggestions (docs/verification.md#lists-flags-and-suggestions): tables with a source per group.
 *
 * COMMON_DOMAINS: the ~200 most common mailbox domains, the only domains a suggestion can point to. Each has a rough
 * weight, the share of addresses it is expected to have in an international consumer list, in addresses per 100,000
 * (gmail.com 30,000 means "about 30%"). The weights are hand-assigned orders of magnitude, not a measurement: they
 * only rank candidates that are about equally close (`yahoo.cm` goes to yahoo.com, 9,000, not yahoo.ca, 60). The
 * order inside each group follows the kinds of source named on it (provider-reported user counts, national market
 * shares, popularity-ordered provider lists), as known when the table was written, not re-checked row by row.
 *
 * PROVIDER_VARIANTS: further real mailbox domains, mostly regional domains of the same providers (hotmail.dk,
 * outlook.cl, yahoo.se). They are never suggested, but they are well known, so they never get a suggestion either:
 * without them `hotmail.dk` would be "corrected" to hotmail.de.
 *
 * COMMON_SUFFIXES and SUFFIX_TYPOS: the public suffixes a top-level typo is corrected to, and the typo forms users
 * make of the most common ones.
 */

/** A group of `[domain, weight]` rows with where the list and its ranking come from. */
export interface WeightedGroup {
  readonly domains: readonly (readonly [domain: string, weight: number])[];
  readonly source: string;
  readonly note?: string;
}

const MAILCHECK =
  'Kicksend/mailcheck (mailcheck.js) default domains list, https://github.com/mailcheck/mailcheck/blob/master/src/mailcheck.js';
const EMAIL_PROVIDERS = 'derhuerst/email-providers common.json (v2.26.0, the devDependency; ordered by popularity)';
const AFTERSHIP_FREE = 'AfterShip/email-verifier free domains (github.com/Kikobeats/free-email-domains)';

export const COMMON_DOMAINS: readonly WeightedGroup[] = [
  {
    domains: [
      ['gmail.com', 30000],
      ['yahoo.com', 9000],
      ['hotmail.com', 8000],
      ['outlook.com', 2500],
      ['aol.com', 2000],
      ['icloud.com', 1500],
      ['live.com', 1200],
      ['msn.com', 500],
      ['googlemail.com', 300],
      ['me.com', 300],
      ['mac.com', 150],
      ['ymail.com', 200],
      ['rocketmail.com', 60],
      ['aim.com', 50],
      ['mail.com', 200],
      ['email.com', 40],
      ['gmx.com', 150],
      ['yandex.com', 150],
      ['zoho.com', 60],
      ['protonmail.com', 100],
      ['proton.me', 60],
      ['pm.me', 20],
      ['fastmail.com', 30],
      ['hushmail.com', 10],
      ['tutanota.com', 20],
      ['inbox.com', 20],
      ['hey.com', 10],
    ],
    source:
      `Global providers. Order: provider-reported user counts (Google: Gmail over 1.5 billion users, 2018; ` +
      `Yahoo, Microsoft and AOL consumer mail in the hundreds of millions), ${MAILCHECK}, ${EMAIL_PROVIDERS}`,
    note: 'me.com, mac.com and icloud.com are the same Apple mailboxes; ymail.com and rocketmail.com are Yahoo',
  },
  {
    domains: [
      ['comcast.net', 600],
      ['verizon.net', 250],
      ['att.net', 400],
      ['sbcglobal.net', 400],
      ['bellsouth.net', 250],
      ['cox.net', 250],
      ['charter.net', 200],
      ['earthlink.net', 150],
      ['optonline.net', 120],
      ['frontier.com', 60],
      ['frontiernet.net', 40],
      ['windstream.net', 50],
      ['juno.com', 60],
      ['netzero.net', 40],
      ['roadrunner.com', 40],
      ['centurylink.net', 40],
      ['embarqmail.com', 30],
      ['mchsi.com', 30],
      ['suddenlink.net', 30],
      ['pacbell.net', 40],
      ['prodigy.net', 20],
      ['cableone.net', 20],
      ['twc.com', 20],
    ],
    source: `United States ISPs, ranked by broadband subscriber counts of the ISPs (Comcast, AT&T, Charter, Verizon, Cox) and ${MAILCHECK}`,
    note: 'att.net, sbcglobal.net, bellsouth.net, pacbell.net and prodigy.net are all AT&T (Yahoo-hosted) mailboxes',
  },
  {
    domains: [
      ['shaw.ca', 150],
      ['rogers.com', 150],
      ['sympatico.ca', 100],
      ['telus.net', 80],
      ['bell.net', 80],
      ['videotron.ca', 50],
      ['cogeco.ca', 30],
      ['yahoo.ca', 60],
      ['hotmail.ca', 80],
      ['live.ca', 40],
    ],
    source: `Canada: ISPs by subscriber counts (Rogers, Bell, Shaw, Telus, Vidéotron, Cogeco), ${MAILCHECK}`,
  },
  {
    domains: [
      ['yahoo.co.uk', 300],
      ['hotmail.co.uk', 400],
      ['live.co.uk', 100],
      ['btinternet.com', 250],
      ['sky.com', 150],
      ['virginmedia.com', 100],
      ['ntlworld.com', 60],
      ['talktalk.net', 60],
      ['blueyonder.co.uk', 40],
      ['aol.co.uk', 40],
      ['tiscali.co.uk', 30],
      ['btopenworld.com', 20],
      ['msn.co.uk', 10],
      ['o2.co.uk', 10],
      ['eircom.net', 30],
    ],
    source: `United Kingdom and Ireland: Ofcom broadband market shares (BT, Sky, Virgin Media, TalkTalk) and ${EMAIL_PROVIDERS}`,
  },
  {
    domains: [
      ['hotmail.fr', 300],
      ['orange.fr', 300],
      ['wanadoo.fr', 200],
      ['free.fr', 200],
      ['sfr.fr', 120],
      ['laposte.net', 120],
      ['yahoo.fr', 150],
      ['live.fr', 80],
      ['neuf.fr', 40],
      ['bbox.fr', 20],
      ['club-internet.fr', 10],
      ['outlook.fr', 30],
    ],
    source: 'France: ISP market shares published by ARCEP (Orange, SFR, Free, Bouygues) and French webmail audience rankings (Médiamétrie)',
  },
  {
    domains: [
      ['web.de', 400],
      ['gmx.de', 400],
      ['gmx.net', 250],
      ['t-online.de', 250],
      ['freenet.de', 60],
      ['yahoo.de', 60],
      ['hotmail.de', 100],
      ['googlemail.de', 5],
      ['arcor.de', 30],
      ['online.de', 20],
      ['posteo.de', 10],
      ['mailbox.org', 10],
      ['gmx.at', 40],
      ['gmx.ch', 30],
      ['bluewin.ch', 60],
      ['aon.at', 10],
      ['chello.at', 10],
    ],
    source:
      'Germany, Austria, Switzerland: German e-mail provider market-share surveys (GMX and WEB.DE lead, then ' +
      `T-Online, Gmail, Freenet), ${EMAIL_PROVIDERS}`,
    note: 'aon.at is Telekom Austria\'s mail domain (A1), not Aon plc',
  },
  {
    domains: [
      ['libero.it', 200],
      ['virgilio.it', 100],
      ['alice.it', 80],
      ['tin.it', 40],
      ['tiscali.it', 50],
      ['hotmail.it', 120],
      ['yahoo.it', 80],
      ['live.it', 60],
      ['email.it', 20],
      ['fastwebnet.it', 20],
      ['hotmail.es', 200],
      ['yahoo.es', 80],
      ['telefonica.net', 30],
      ['terra.es', 20],
      ['sapo.pt', 30],
    ],
    source: `Italy, Spain and Portugal: Italian webmail audience rankings (Libero, Virgilio, Alice/TIM), ${EMAIL_PROVIDERS}`,
  },
  {
    domains: [
      ['ziggo.nl', 60],
      ['kpnmail.nl', 40],
      ['home.nl', 30],
      ['planet.nl', 30],
      ['hetnet.nl', 20],
      ['hotmail.nl', 40],
      ['live.nl', 60],
      ['xs4all.nl', 20],
      ['telenet.be', 60],
      ['skynet.be', 40],
      ['hotmail.be', 40],
      ['live.be', 30],
      ['hotmail.se', 30],
      ['telia.com', 20],
      ['online.no', 20],
      ['hotmail.dk', 20],
      ['live.dk', 10],
    ],
    source: `Benelux and Nordics: ISP market shares (Ziggo, KPN, Telenet, Proximus, Telia, Telenor), ${EMAIL_PROVIDERS}`,
  },
  {
    domains: [
      ['mail.ru', 1200],
      ['yandex.ru', 800],
      ['rambler.ru', 100],
      ['bk.ru', 120],
      ['inbox.ru', 100],
      ['list.ru', 100],
      ['ya.ru', 40],
      ['ukr.net', 100],
      ['i.ua', 20],
      ['wp.pl', 150],
      ['o2.pl', 80],
      ['onet.pl', 80],
      ['interia.pl', 80],
      ['op.pl', 40],
      ['gazeta.pl', 20],
      ['seznam.cz', 120],
      ['centrum.cz', 30],
      ['email.cz', 20],
      ['abv.bg', 30],
      ['inbox.lv', 10],
    ],
    source:
      'Russia, Ukraine, Central and Eastern Europe: Mail.ru Group and Yandex audience figures, Polish webmail ' +
      `rankings (WP, Onet, Interia, o2), ${EMAIL_PROVIDERS}`,
    note: 'bk.ru, inbox.ru and list.ru are Mail.ru mailboxes',
  },
  {
    domains: [
      ['qq.com', 3000],
      ['163.com', 1500],
      ['126.com', 600],
      ['sina.com', 200],
      ['sohu.com', 80],
      ['yeah.net', 80],
      ['foxmail.com', 150],
      ['139.com', 100],
      ['aliyun.com', 60],
      ['21cn.com', 20],
      ['naver.com', 500],
      ['hanmail.net', 200],
      ['daum.net', 100],
      ['nate.com', 60],
      ['yahoo.co.jp', 300],
      ['docomo.ne.jp', 100],
      ['ezweb.ne.jp', 80],
      ['softbank.ne.jp', 40],
      ['i.softbank.jp', 40],
      ['nifty.com', 30],
      ['biglobe.ne.jp', 30],
      ['ocn.ne.jp', 30],
      ['yahoo.com.tw', 60],
      ['hinet.net', 40],
      ['yahoo.com.hk', 40],
      ['netvigator.com', 20],
    ],
    source:
      'China, Korea, Japan, Taiwan, Hong Kong: Tencent and NetEase reported mailbox counts (QQ Mail, 163/126), ' +
      `Korean portal shares (Naver, Daum/Kakao), Japanese carrier mail domains (docomo, au/ezweb, SoftBank), ${EMAIL_PROVIDERS}`,
    note: 'foxmail.com is QQ Mail; hanmail.net and daum.net are the same Daum mailboxes',
  },
  {
    domains: [
      ['rediffmail.com', 100],
      ['yahoo.co.in', 150],
      ['yahoo.in', 40],
      ['yahoo.com.sg', 20],
      ['singnet.com.sg', 20],
      ['yahoo.com.my', 20],
      ['yahoo.co.id', 60],
      ['yahoo.com.ph', 40],
      ['yahoo.com.vn', 30],
      ['yahoo.co.th', 20],
    ],
    source: `South and South-East Asia: ${EMAIL_PROVIDERS}, ${AFTERSHIP_FREE}`,
  },
  {
    domains: [
      ['bigpond.com', 150],
      ['bigpond.net.au', 60],
      ['optusnet.com.au', 80],
      ['iinet.net.au', 40],
      ['tpg.com.au', 30],
      ['internode.on.net', 20],
      ['westnet.com.au', 20],
      ['ozemail.com.au', 20],
      ['yahoo.com.au', 80],
      ['hotmail.com.au', 40],
      ['live.com.au', 30],
      ['xtra.co.nz', 60],
      ['yahoo.co.nz', 20],
    ],
    source: `Australia and New Zealand: ISP market shares (Telstra/BigPond, Optus, TPG/iiNet), ${MAILCHECK}, ${EMAIL_PROVIDERS}`,
  },
  {
    domains: [
      ['uol.com.br', 200],
      ['bol.com.br', 150],
      ['terra.com.br', 80],
      ['ig.com.br', 60],
      ['globo.com', 60],
      ['r7.com', 20],
      ['yahoo.com.br', 250],
      ['hotmail.com.br', 60],
      ['outlook.com.br', 40],
      ['yahoo.com.ar', 80],
      ['hotmail.com.ar', 60],
      ['yahoo.com.mx', 80],
      ['hotmail.com.mx', 30],
      ['prodigy.net.mx', 40],
      ['live.com.mx', 30],
      ['terra.cl', 10],
    ],
    source: `Latin America: Brazilian portal audiences (UOL, BOL, Terra, iG, Globo), ${EMAIL_PROVIDERS}`,
  },
  {
    domains: [
      ['walla.co.il', 30],
      ['bezeqint.net', 20],
      ['mweb.co.za', 30],
      ['telkomsa.net', 20],
      ['otenet.gr', 10],
    ],
    source: `Israel, South Africa, Greece: national ISPs and portals, ${EMAIL_PROVIDERS}`,
  },
];

/** A group of domains with its source (the shape of src/lists/data/sourced.ts). */
export interface DomainGroup {
  readonly names: readonly string[];
  readonly source: string;
  readonly note?: string;
}

const EMAIL_PROVIDERS_ALL = 'derhuerst/email-providers all.json (v2.26.0)';

/**
 * Real mailbox domains that are not suggestion targets but must never be "corrected". Entries of
 * derhuerst/email-providers all.json that are themselves typos were left out: hotmail.cm, hotmail.con, gmail.co,
 * gmail.om, gmail.com.com, yahoo.om (that list collects domains seen in sign-ups, typos included).
 */
export const PROVIDER_VARIANTS: readonly DomainGroup[] = [
  {
    names: [
      'hotmail.co.il', 'hotmail.co.jp', 'hotmail.co.kr', 'hotmail.co.nz', 'hotmail.co.th', 'hotmail.gr', 'hotmail.ru',
      'hotmail.sg', 'hotmail.kz', 'hotmail.kg',
      'outlook.at', 'outlook.be', 'outlook.cl', 'outlook.co.id', 'outlook.co.il', 'outlook.co.nz', 'outlook.co.th',
      'outlook.com.ar', 'outlook.com.au', 'outlook.com.gr', 'outlook.com.pe', 'outlook.com.tr', 'outlook.com.vn',
      'outlook.cz', 'outlook.de', 'outlook.dk', 'outlook.es', 'outlook.hu', 'outlook.ie', 'outlook.in', 'outlook.it',
      'outlook.jp', 'outlook.kr', 'outlook.lv', 'outlook.my', 'outlook.ph', 'outlook.pt', 'outlook.sa', 'outlook.sg',
      'outlook.sk',
      'live.cn', 'live.co.kr', 'live.com.ar', 'live.com.sg', 'live.de', 'live.hk', 'live.ie', 'live.jp', 'windowslive.com',
      'yahoo.cn', 'yahoo.co.kr', 'yahoo.com.asia', 'yahoo.com.cn', 'yahoo.com.es', 'yahoo.com.ru', 'yahoo.dk',
      'yahoo.gr', 'yahoo.ie', 'yahoo.jp', 'yahoo.ro', 'yahoo.ru', 'yahoo.se', 'ymail.net', 'ymail.org',
      'gmx.fr', 'gmx.li', 'aol.it', 'fastmail.fm', 'protonmail.ch', 'sina.cn', 'vip.qq.com', '188.com', 'tom.com',
      'centrum.sk', 'post.cz', 'wanadoo.es', 'wanadoo.co.uk', 'virgin.net', 'talktalk.co.uk', 'bt.com', 'q.com',
      'rr.com', 'optimum.net', 'ptd.net', 'tds.net', 'wowway.com', 'netscape.net', 'cs.com', 'usa.net', 'sasktel.net',
      'eastlink.ca',
    ],
    source: `Regional domains of the big providers and smaller ISPs, all in ${EMAIL_PROVIDERS_ALL}`,
  },
  {
    names: [
      'live.se', 'live.no', 'live.at', 'live.ru', 'live.in', 'live.cl', 'yahoo.no', 'yahoo.pl', 'yahoo.at',
      'gmx.es', 'gmx.co.uk', 'gmx.us', 'yandex.by', 'yandex.kz', 'yandex.ua', 'yandex.com.tr', 'internet.ru',
      'lenta.ru', 'autorambler.ru', 'myrambler.ru', 'ro.ru', 'tutanota.de', 'tutamail.com', 'tuta.io', 'zohomail.com',
      'mail.de', 'email.de', 'interia.eu', 'poczta.onet.pl', 'vp.pl', 'tlen.pl', 'go2.pl', 'spoko.pl',
      'vip.163.com', 'vip.126.com', 'wo.cn', 'kakao.com', 'au.com', 'wanadoo.nl', 'atlas.cz',
    ],
    source:
      'Mail domains the providers offer at sign-up or name in their help pages (Microsoft, Yahoo, GMX, Yandex, ' +
      'Rambler, Mail.ru, Tuta, Zoho, Interia, Onet, WP, NetEase, China Unicom, Kakao, KDDI au), added by hand',
    note: 'not checked against a maintained list; being here only stops suggestions for them',
  },
  {
    names: [
      '3email.com', '4email.com', 'edmail.com', 'ehmail.com', 'emil.com', 'coxmail.com', 'earthling.net', 'eastmail.com',
      'liberto.it', 'mail.nu', 'online.ie', 'proto2mail.com', 'terra.com.ar', 'tiscali.at', 'uk7.net', 'uk8.net',
      'y7mail.com', 'ymail4.com',
    ],
    source:
      `Free-mail domains of ${EMAIL_PROVIDERS_ALL} one slip from a common domain, kept as providers: the list names ` +
      'them and the real typos of mailgun/flanker do not (terra.com.ar, Terra Argentina, is also in common.json; ' +
      'y7mail.com is Yahoo7 Mail, Australia; most others are free-mail services of the early web under their own names)',
    note:
      'the free-provider list keeps them (src/lists/free-providers.ts); being here stops the suggester from ' +
      'correcting them. Typos in that list go to src/lists/data/free-provider-exclusions.ts instead',
  },
];

/**
 * Public suffixes a top-level typo can be corrected to, with a rough, hand-assigned weight (the same scale as the
 * domains: share of addresses per 100,000). The order follows registered domains per TLD (Verisign's Domain Name
 * Industry Brief, ccTLD registry statistics), adjusted for mailbox use: the big providers make `.com` dominant in
 * address lists. A suffix missing here is "unusual": on a short name it may be taken for a slip (`aol.om`).
 */
export const COMMON_SUFFIXES: readonly (readonly [suffix: string, weight: number])[] = [
  ['com', 60000], ['net', 5000], ['org', 2000], ['edu', 1000], ['de', 2500], ['fr', 1500], ['co.uk', 1500],
  ['ru', 2000], ['com.br', 1000], ['it', 800], ['nl', 500], ['es', 500], ['pl', 500], ['ca', 500], ['com.au', 400],
  ['jp', 300], ['co.jp', 300], ['ne.jp', 300], ['in', 200], ['co.in', 100], ['cn', 200], ['com.cn', 100],
  ['be', 200], ['ch', 200], ['at', 200], ['se', 150], ['no', 100], ['dk', 100], ['fi', 80], ['cz', 150],
  ['ua', 100], ['com.ua', 50], ['gov', 200], ['us', 100], ['info', 100], ['biz', 50], ['io', 50], ['co', 50],
  ['me', 50], ['eu', 80], ['ie', 50], ['pt', 80], ['gr', 50], ['tr', 50], ['com.tr', 50], ['ro', 80], ['hu', 80],
  ['sk', 50], ['bg', 30], ['lv', 20], ['lt', 20], ['ee', 20], ['il', 20], ['co.il', 30], ['co.za', 50], ['za', 10],
  ['com.ar', 80], ['com.mx', 80], ['mx', 30], ['cl', 30], ['com.co', 30], ['pe', 20], ['com.pe', 20],
  ['net.au', 60], ['co.nz', 50], ['nz', 10], ['kr', 30], ['co.kr', 30], ['tw', 30], ['com.tw', 30], ['hk', 20],
  ['com.hk', 20], ['sg', 20], ['com.sg', 20], ['my', 20], ['com.my', 20], ['id', 20], ['co.id', 20], ['ph', 20],
  ['com.ph', 20], ['vn', 20], ['com.vn', 20], ['th', 10], ['co.th', 20], ['ac.uk', 100], ['org.uk', 50],
  ['net.br', 20], ['org.br', 10], ['edu.au', 20], ['ac.jp', 20], ['ac.in', 10],
];

/**
 * Typo forms of the most common suffixes that are seen in sign-up data, mostly for `.com`. Forms that are not
 * delegated top-level domains (`con`, `cmo`) can only be typos; `co` (Colombia), `cm` (Cameroon), `om` (Oman) and
 * `cam` are real, so they are corrected only for a known second-level label (`gmail.co`, never `example.co`).
 * Sources: the top-level list of Kicksend/mailcheck, the typos kept in derhuerst/email-providers all.json
 * (hotmail.con, gmail.co, gmail.om, yahoo.om, hotmail.cm) and mailgun/flanker tests/fixtures/domain_typos_valid.txt
 * (`gmail.c`, `gmail.m`, `hotmail.c`: the rest of `.com` dropped).
 */
export const SUFFIX_TYPOS: Readonly<Record<string, readonly string[]>> = {
  com: ['con', 'cmo', 'ocm', 'comm', 'coom', 'cm', 'co', 'om', 'vom', 'xom', 'cpm', 'cim', 'clm', 'coim', 'c0m', 'comn', 'cam', 'c', 'm'],
  net: ['ner', 'nte', 'ent', 'nt', 'met', 'nett', 'ne'],
  org: ['ogr', 'rog', 'og', 'orgg', 'or'],
  'co.uk': ['co.ul', 'co.uj', 'co.um', 'couk', 'co.u', 'co.k', 'co.ik', 'co.yk', 'co.ukk', 'com.uk', 'cok.uk'],
  'com.br': ['com.b', 'con.br', 'cmo.br', 'com.rb', 'co.br', 'combr'],
  de: ['dee', 'ed', 'fe'],
  fr: ['rf', 'ff', 'dr', 'ft'],
};
