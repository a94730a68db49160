import { describe, expect, it } from 'vitest';
import { getPublicSuffix } from 'tldts';
import { createLists, roleKey, type ListsOptions } from '../../packages/mailverify/src/lists/lists.js';
import { normalizeDomain } from '../../packages/mailverify/src/lists/domain-set.js';
import { disposableDomainData, freeProviderDomainData, usableEntries } from '../../packages/mailverify/src/lists/packages.js';
import { DISPOSABLE_MAIL_EXCHANGERS, HONEYPOT_MAIL_EXCHANGERS, PARKED_MAIL_EXCHANGERS } from '../../packages/mailverify/src/lists/data/mail-exchangers.js';
import { RELAY_DOMAINS } from '../../packages/mailverify/src/lists/data/relay-domains.js';
import { ROLE_LOCAL_PARTS } from '../../packages/mailverify/src/lists/data/role-local-parts.js';
import { namesOf, type Sourced } from '../../packages/mailverify/src/lists/data/sourced.js';

const lists = createLists();

/** Big mailbox providers: never disposable in any candidate list worth shipping (docs/lists.md). */
const MAILBOX_PROVIDERS = [
  'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'live.com', 'yahoo.com', 'ymail.com', 'aol.com',
  'protonmail.com', 'proton.me', 'pm.me', 'icloud.com', 'me.com', 'gmx.de', 'gmx.net', 'web.de', 'mail.ru',
  'yandex.ru', 'zoho.com', 'fastmail.com', 'qq.com', '163.com', 'orange.fr', 'free.fr', 't-online.de', 'comcast.net',
];
/** Well-known throwaway services: all in the disposable list. */
const DISPOSABLE = [
  'mailinator.com', '10minutemail.com', 'guerrillamail.com', 'sharklasers.com', 'yopmail.com', 'temp-mail.org',
  'maildrop.cc', 'getnada.com', 'dispostable.com', 'trashmail.com',
];
/** Companies and organisations: in no list. */
const COMPANIES = ['mozilla.org', 'acme-widgets.com', 'example.org', 'verifalia.com'];

describe('disposable domains (DomainIsWellKnownDea)', () => {
  it('lists the well-known throwaway services and their subdomains', () => {
    for (const domain of DISPOSABLE) expect(lists.isDisposableDomain(domain), domain).toBe(true);
    expect(lists.isDisposableDomain('x.mailinator.com')).toBe(true);
    expect(lists.isDisposableDomain('a.b.yopmail.com')).toBe(true);
    // One of Mailinator's own alternate domains, listed in its own right.
    expect(lists.isDisposableDomain('notmailinator.com')).toBe(true);
  });

  it('does not list mailbox providers, companies or look-alikes', () => {
    for (const domain of [...MAILBOX_PROVIDERS, ...COMPANIES]) expect(lists.isDisposableDomain(domain), domain).toBe(false);
    expect(lists.isDisposableDomain('mymailinator.com')).toBe(false);
    expect(lists.isDisposableDomain('mailinator.com.example.org')).toBe(false);
  });

  it('lets a listed public suffix cover only itself (dns.army is a dynamic-DNS zone in the package list)', () => {
    expect(lists.isDisposableDomain('dns.army')).toBe(true);
    expect(lists.isDisposableDomain('someone.dns.army')).toBe(false);
  });

  it('leaves relay services to MailboxIsDea', () => {
    for (const domain of namesOf(RELAY_DOMAINS)) expect(lists.isDisposableDomain(domain), domain).toBe(false);
  });
});

describe('free providers (isFreeEmailAddress)', () => {
  it('flags consumer mailbox providers, their national domains and subdomains', () => {
    for (const domain of ['gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.co.uk', 'yahoo.co.jp', 'gmx.de', 'web.de',
      'yandex.ru', 'mail.ru', 'icloud.com', 'protonmail.com', 'proton.me', 'aol.com']) {
      expect(lists.isFreeProvider(domain), domain).toBe(true);
    }
  });

  it('does not flag companies', () => {
    for (const domain of COMPANIES) expect(lists.isFreeProvider(domain), domain).toBe(false);
  });

  it('never calls a disposable domain free, although the package lists mailinator.com', () => {
    expect(freeProviderDomainData()).toContain('mailinator.com');
    for (const domain of DISPOSABLE) expect(lists.isFreeProvider(domain), domain).toBe(false);
  });

  it('does not let a listed public suffix cover the companies registered under it', () => {
    expect(freeProviderDomainData()).toContain('com.ar');
    expect(freeProviderDomainData()).toContain('msk.ru');
    expect(lists.isFreeProvider('acme.com.ar')).toBe(false);
    expect(lists.isFreeProvider('acme.msk.ru')).toBe(false);
  });
});

describe('role accounts (isRoleAccount)', () => {
  it('matches RFC 2142 names and common functional mailboxes', () => {
    for (const local of ['postmaster', 'abuse', 'hostmaster', 'webmaster', 'noc', 'security', 'info', 'sales', 'support',
      'marketing', 'admin', 'contact', 'hello', 'help', 'billing', 'office', 'team', 'jobs', 'careers', 'hr', 'press',
      'media', 'noreply', 'mailer-daemon', 'kontakt']) {
      expect(lists.isRoleAccount(local), local).toBe(true);
    }
  });

  it('compares lower case, before any +tag, with separators ignored', () => {
    for (const local of ['Info', 'INFO', 'sales+eu', 'Support+ticket-42', 'No-Reply', 'no_reply', 'no.reply', 'MAILER_DAEMON', 'customer.service']) {
      expect(lists.isRoleAccount(local), local).toBe(true);
    }
  });

  it('reads a quoted local part as the mailbox it names', () => {
    expect(lists.isRoleAccount('"support"')).toBe(true);
    expect(lists.isRoleAccount('"sales+eu"')).toBe(true);
    expect(lists.isRoleAccount('"in\\fo"')).toBe(true);
    expect(lists.isRoleAccount('"sales team"')).toBe(false);
  });

  it('does not flag people or near misses', () => {
    for (const local of ['john', 'j.doe', 'jane.smith', 'dean', 'chef', 'paris', 'information', 'infos', 'sales1', '+info', 'info2', '"john"', '']) {
      expect(lists.isRoleAccount(local), local).toBe(false);
    }
  });

  it('derives one key per spelling', () => {
    expect(roleKey('No-Reply+x')).toBe('noreply');
    expect(roleKey('"a\\"b"')).toBe('a"b');
  });
});

describe('relay and masking services (MailboxIsDea)', () => {
  it('lists the alias domains and the per-user subdomains', () => {
    for (const domain of ['privaterelay.appleid.com', 'mozmail.com', 'jane.mozmail.com', 'relay.firefox.com', 'duck.com',
      'simplelogin.com', 'jane.simplelogin.com', 'aleeas.com', 'slmail.me', 'johndoe.anonaddy.com', 'anonaddy.me',
      'passmail.net', 'passinbox.com', 'jane.33mail.com']) {
      expect(lists.isRelayDomain(domain), domain).toBe(true);
    }
  });

  it('does not list the services’ own web domains or mailbox providers', () => {
    for (const domain of ['firefox.com', 'mozilla.org', 'simplelogin.io', 'addy.io', 'appleid.com', 'apple.com', 'icloud.com',
      'duckduckgo.com', 'proton.me', 'gmail.com', 'mailinator.com']) {
      expect(lists.isRelayDomain(domain), domain).toBe(false);
    }
  });
});

describe('mail exchanger categories', () => {
  it('recognises disposable services’ exchangers, from the table and under listed disposable domains', () => {
    for (const host of ['mail.mailinator.com', 'mail2.mailinator.com', 'smtp.yopmail.com', 'mx.yopmail.com', 'generator.email',
      'mx1.generator.email', 'in.mail.tm', 'mx2.den.yt']) {
      expect(lists.mailExchangerCategory(host), host).toBe('disposable');
    }
  });

  it('recognises parking exchangers', () => {
    expect(lists.mailExchangerCategory('park-mx.above.com')).toBe('parked');
    expect(lists.mailExchangerCategory('above.com')).toBeNull();
  });

  it('leaves mainstream, shared-hosting and registrar forwarding exchangers alone', () => {
    for (const host of ['aspmx.l.google.com', 'gmail-smtp-in.l.google.com', 'acme-com.mail.protection.outlook.com',
      'mta5.am0.yahoodns.net', 'mx.yandex.net', 'mx.zoho.com', 'route1.mx.cloudflare.net', 'mxa.mailgun.org',
      'mx1.hostinger.com', 'eforward1.registrar-servers.com', 'mail.protonmail.ch', 'mx01.mail.icloud.com',
      'mx00.ionos.com', 'mx1.improvmx.com', 'in1-smtp.messagingengine.com', 'mx1.forwardemail.net',
      'mailstore1.secureserver.net', 'smtp.secureserver.net', 'parkmail.dynadot.com', 'mx00.emig.gmx.net',
      'us2.mx1.mailhostbox.com', 'mx1.simplelogin.co', 'mail.anonaddy.me']) {
      expect(lists.mailExchangerCategory(host), host).toBeNull();
    }
  });

  it('has no built-in honeypot exchangers', () => {
    expect(HONEYPOT_MAIL_EXCHANGERS).toEqual([]);
    expect(lists.mailExchangerCategory('trap.example.net')).toBeNull();
  });
});

describe('options', () => {
  it('extends every list with a plain iterable', () => {
    const extended = createLists({
      disposableDomains: ['throwaway.test'],
      freeProviderDomains: new Set(['mymail.example']),
      roleLocalParts: ['Ops-Team'],
      relayDomains: ['alias.example'],
      disposableMailExchangers: ['mx.throwaway.example'],
      parkedMailExchangers: ['mx.parking.example'],
      honeypotMailExchangers: ['trap.example.net'],
    });
    expect(extended.isDisposableDomain('x.throwaway.test')).toBe(true);
    expect(extended.isDisposableDomain('mailinator.com')).toBe(true);
    expect(extended.isFreeProvider('mymail.example')).toBe(true);
    expect(extended.isFreeProvider('gmail.com')).toBe(true);
    expect(extended.isRoleAccount('ops.team+x')).toBe(true);
    expect(extended.isRoleAccount('postmaster')).toBe(true);
    expect(extended.isRelayDomain('u.alias.example')).toBe(true);
    expect(extended.mailExchangerCategory('mx.throwaway.example')).toBe('disposable');
    expect(extended.mailExchangerCategory('mx.parking.example')).toBe('parked');
    expect(extended.mailExchangerCategory('trap.example.net')).toBe('honeypot');
    expect(extended.mailExchangerCategory('in.trap.example.net')).toBe('honeypot');
  });

  it('removes entries from every list', () => {
    const trimmed = createLists({
      disposableDomains: { remove: ['mailinator.com'] },
      freeProviderDomains: { remove: ['gmail.com'] },
      roleLocalParts: { remove: ['INFO'] },
      relayDomains: { remove: ['duck.com'] },
      disposableMailExchangers: { remove: ['smtp.yopmail.com'] },
      parkedMailExchangers: { remove: ['park-mx.above.com'] },
      honeypotMailExchangers: { remove: ['nothing.example'] },
    });
    expect(trimmed.isDisposableDomain('mailinator.com')).toBe(false);
    expect(trimmed.isDisposableDomain('yopmail.com')).toBe(true);
    expect(trimmed.isFreeProvider('gmail.com')).toBe(false);
    expect(trimmed.isFreeProvider('outlook.com')).toBe(true);
    expect(trimmed.isRoleAccount('info')).toBe(false);
    expect(trimmed.isRoleAccount('sales')).toBe(true);
    expect(trimmed.isRelayDomain('duck.com')).toBe(false);
    // smtp.yopmail.com is still under the disposable domain yopmail.com.
    expect(trimmed.mailExchangerCategory('smtp.yopmail.com')).toBe('disposable');
    expect(trimmed.mailExchangerCategory('mail.mailinator.com')).toBe('disposable');
    expect(trimmed.mailExchangerCategory('park-mx.above.com')).toBeNull();
  });

  it('replaces every list, then adds and removes', () => {
    const replaced = createLists({
      disposableDomains: { replace: ['throwaway.test', 'other.test'], add: ['third.test'], remove: ['other.test'] },
      freeProviderDomains: { replace: ['mymail.example'] },
      roleLocalParts: { replace: ['robot'] },
      relayDomains: { replace: [] },
      disposableMailExchangers: { replace: ['mx.throwaway.example'] },
      parkedMailExchangers: { replace: ['mx.parking.example'] },
      honeypotMailExchangers: { replace: ['trap.example.net'] },
    });
    expect(replaced.isDisposableDomain('throwaway.test')).toBe(true);
    expect(replaced.isDisposableDomain('third.test')).toBe(true);
    expect(replaced.isDisposableDomain('other.test')).toBe(false);
    expect(replaced.isDisposableDomain('mailinator.com')).toBe(false);
    expect(replaced.isFreeProvider('mymail.example')).toBe(true);
    expect(replaced.isFreeProvider('gmail.com')).toBe(false);
    expect(replaced.isRoleAccount('robot')).toBe(true);
    expect(replaced.isRoleAccount('postmaster')).toBe(false);
    expect(replaced.isRelayDomain('duck.com')).toBe(false);
    expect(replaced.mailExchangerCategory('mx.throwaway.example')).toBe('disposable');
    expect(replaced.mailExchangerCategory('smtp.yopmail.com')).toBeNull();
    expect(replaced.mailExchangerCategory('mail.mailinator.com')).toBeNull();
    expect(replaced.mailExchangerCategory('park-mx.above.com')).toBeNull();
    expect(replaced.mailExchangerCategory('mx.parking.example')).toBe('parked');
    expect(replaced.mailExchangerCategory('trap.example.net')).toBe('honeypot');
  });

  it('keeps a disposable domain out of the free providers, whichever list options change', () => {
    const moved = createLists({ disposableDomains: ['gmail.com'] });
    expect(moved.isDisposableDomain('gmail.com')).toBe(true);
    expect(moved.isFreeProvider('gmail.com')).toBe(false);
  });

  it('changes only the lists it was given', () => {
    createLists({ disposableDomains: { remove: ['mailinator.com'] }, roleLocalParts: { replace: [] } });
    const fresh = createLists();
    expect(fresh.isDisposableDomain('mailinator.com')).toBe(true);
    expect(fresh.isRoleAccount('postmaster')).toBe(true);
  });

  it('refuses malformed options with the option named', () => {
    const bad: unknown[] = [
      { disposableDomains: 'mailinator.com' },
      { disposableDomains: 42 },
      { disposableDomains: { extend: ['a.test'] } },
      { disposableDomains: { add: 'a.test' } },
      { relayDomains: [42] },
      { relayDomains: ['not a domain'] },
      { roleLocalParts: ['+tag'] },
    ];
    for (const options of bad) {
      expect(() => createLists(options as ListsOptions), JSON.stringify(options)).toThrow(/createLists: option \w+/);
    }
    expect(() => createLists(null as unknown as ListsOptions)).toThrow(TypeError);
  });
});

describe('the built-in tables', () => {
  const tables: Record<string, readonly Sourced[]> = {
    ROLE_LOCAL_PARTS,
    RELAY_DOMAINS,
    DISPOSABLE_MAIL_EXCHANGERS,
    PARKED_MAIL_EXCHANGERS,
    HONEYPOT_MAIL_EXCHANGERS,
  };

  it('give a source for every group', () => {
    for (const [name, groups] of Object.entries(tables)) {
      for (const group of groups) {
        expect(group.source.length, name).toBeGreaterThan(10);
        expect(group.names.length, name).toBeGreaterThan(0);
      }
    }
  });

  it('hold each entry once, in stored form', () => {
    for (const [name, groups] of Object.entries(tables)) {
      const names = namesOf(groups);
      const keys = name === 'ROLE_LOCAL_PARTS' ? names.map(roleKey) : names.map((entry) => normalizeDomain(entry));
      expect(new Set(keys).size, name).toBe(names.length);
      if (name !== 'ROLE_LOCAL_PARTS') expect(keys, name).toEqual(names);
    }
  });

  it('hold no public suffix', () => {
    for (const name of [...namesOf(RELAY_DOMAINS), ...namesOf(DISPOSABLE_MAIL_EXCHANGERS), ...namesOf(PARKED_MAIL_EXCHANGERS)]) {
      expect(getPublicSuffix(name, { allowPrivateDomains: true }), name).not.toBe(name);
    }
  });
});

describe('the package data (run after every update of the packages)', () => {
  it('still has its shape and size', () => {
    const disposable = usableEntries(disposableDomainData());
    const free = usableEntries(freeProviderDomainData());
    expect(disposable.length).toBeGreaterThan(5_000);
    expect(free.length).toBeGreaterThan(5_000);
    // Almost every entry is a usable host name.
    expect(disposable.length).toBeGreaterThan(disposableDomainData().length * 0.99);
    expect(free.length).toBeGreaterThan(freeProviderDomainData().length * 0.99);
  });

  it('lists no mailbox provider, relay service or mainstream exchanger domain as disposable', () => {
    const disposable = new Set(disposableDomainData());
    for (const domain of [...MAILBOX_PROVIDERS, ...namesOf(RELAY_DOMAINS), 'yandex.net', 'google.com', 'outlook.com',
      'improvmx.com', 'forwardemail.net', 'cloudflare.net', 'secureserver.net', 'registrar-servers.com']) {
      expect(disposable.has(domain), domain).toBe(false);
    }
  });
});

describe('role accounts: the quick length and first-letter test never changes an answer', () => {
  it('agrees with a lookup of the role key, for mixed case, separators, tags, quotes and non-ASCII', () => {
    const custom = createLists({ roleLocalParts: ['ops.team', 'ÿx', 'Über'] });
    const keys = new Set([...namesOf(ROLE_LOCAL_PARTS), 'ops.team', 'ÿx', 'Über'].map(roleKey));
    const locals = [
      'info', 'INFO', 'In-Fo', 'i.n.f.o', 'info+x', '+info', 'no_reply', 'No-Reply+x', 'noreply.', '.noreply', 'ops.team',
      'OPS_TEAM+eu', 'opsteam', 'ÿx', 'ŸX', 'über', 'ÜBER', 'İnfo', 'ınfo', '"info"', '"in\\fo"', '"sales team"', 'h.r',
      'hr', 'x', '', '+', '...', 'john.smith', 'postmaster', 'Post.Master', 'webmaster1',
    ];
    for (const local of locals) expect(custom.isRoleAccount(local), local).toBe(keys.has(roleKey(local)));
  });
});
