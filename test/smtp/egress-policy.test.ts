// The egress policy's parts on their own: which replies are about the prober, the cooling's doubling and reset, the
// recipient ledger's windows (a clock of the test's), and the provider of an exchanger host name.
import { describe, expect, it } from 'vitest';
import { LocalRecipientLedger } from '../../packages/mailverify/src/smtp/egress/budget.js';
import { Cooling, isAboutProber } from '../../packages/mailverify/src/smtp/egress/cooling.js';
import { PROVIDER_PROFILES, Providers, checkProviderProfiles } from '../../packages/mailverify/src/smtp/egress/providers.js';

describe('isAboutProber', () => {
  it.each([
    [421, '4.7.0 Too many connections, try again later', true],
    [421, 'Service not available', true],
    [421, '4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address', true],
    [550, '5.7.606 Access denied, banned sending IP [203.0.113.5]', true],
    [550, '5.7.649 Access denied', true],
    [451, '4.7.650 The mail server [203.0.113.5] has been temporarily rate limited due to IP reputation', true],
    [554, '5.7.1 Service unavailable; Client host [203.0.113.5] blocked using zen.spamhaus.org', true],
    [450, '4.7.1 Client host rejected: cannot find your reverse hostname', true],
    [451, '4.7.0 Temporarily deferred due to unexpected volume', true],
    // About the recipient or the mailbox: no cooling.
    [450, '4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages', false],
    [450, '4.7.1 Greylisted, please try again later', false],
    [550, '5.1.1 The email account that you tried to reach does not exist', false],
    [550, '5.7.1 Recipient address rejected: Access denied', false],
    [554, 'Client host blocked using zen.spamhaus.org', false],
    [250, '2.1.5 OK', false],
  ])('%i %s → %s', (code, text, expected) => {
    expect(isAboutProber({ code, text })).toBe(expected);
  });
});

describe('Cooling', () => {
  it('lasts a minute, doubles up to 30 minutes while no clean session comes between, and a clean one resets it', () => {
    let now = 0;
    const cooling = new Cooling(() => now);
    const lengths: number[] = [];
    for (let i = 0; i < 7; i++) {
      const started = cooling.start('e', 'p')!;
      lengths.push(started.cooldownMs);
      // A reply while cooling does not extend it.
      expect(cooling.start('e', 'p')).toBeNull();
      expect(cooling.coolingUntil('e', 'p')).toBe(now + started.cooldownMs);
      // A session that ended cleanly while cooling does not reset it.
      cooling.clean('e', 'p');
      now += started.cooldownMs;
      expect(cooling.isCooling('e', 'p')).toBe(false);
    }
    expect(lengths).toEqual([60_000, 120_000, 240_000, 480_000, 960_000, 1_800_000, 1_800_000]);
    cooling.clean('e', 'p');
    expect(cooling.start('e', 'p')!.cooldownMs).toBe(60_000);
    // Pairs are apart.
    expect(cooling.isCooling('e', 'other')).toBe(false);
    expect(cooling.isCooling('other', 'p')).toBe(false);
  });
});

describe('LocalRecipientLedger', () => {
  it('grants up to the minute rate in any 60 s, and up to the day budget in any 24 h; what is given back counts no more', async () => {
    let now = 1_000_000;
    const ledger = new LocalRecipientLedger(() => now);
    const limits = { perMinute: 5, perDay: 12 };
    expect((await ledger.take('e', 'p', 3, limits)).granted).toBe(3);
    now += 30_000;
    expect((await ledger.take('e', 'p', 10, limits)).granted).toBe(2);
    const full = await ledger.take('e', 'p', 1, limits);
    expect(full).toEqual({ granted: 0, retryInMs: 30_000, daySpent: false });
    expect(ledger.peek('e', 'p', limits)).toEqual({ daySpent: false, retryInMs: 30_000 });
    await ledger.giveBack('e', 'p', 1, limits);
    expect((await ledger.take('e', 'p', 5, limits)).granted).toBe(1);
    // 60 s after the first three, they leave the minute's window.
    now += 30_000;
    expect((await ledger.take('e', 'p', 10, limits)).granted).toBe(3);
    now += 60_000;
    // The minute is free again; the day has 4 left of its 12.
    expect((await ledger.take('e', 'p', 10, limits)).granted).toBe(4);
    now += 60_000;
    expect(await ledger.take('e', 'p', 10, limits)).toEqual({ granted: 0, retryInMs: 0, daySpent: true });
    expect(ledger.peek('e', 'p', limits).daySpent).toBe(true);
    // Another pair has its own budget; a day later this one has its budget again.
    expect((await ledger.take('other', 'p', 2, limits)).granted).toBe(2);
    now += 24 * 3_600_000;
    expect((await ledger.take('e', 'p', 2, limits)).granted).toBe(2);
  });
});

describe('LocalRecipientLedger, the times of a grant', () => {
  it('a round\'s RCPTs count from when its replies are in, not from the grant (a server counts them on arrival)', async () => {
    let now = 1_000_000;
    const ledger = new LocalRecipientLedger(() => now);
    const limits = { perMinute: 4 };
    const grant = await ledger.take('e', 'p', 4, limits);
    expect(grant.granted).toBe(4);
    // The round took 2 s; its RCPTs reached the server during those.
    now += 2_000;
    await ledger.restamp('e', 'p', 4, limits, grant);
    // 60 s after the grant the server still counts them all: nothing is granted until 60 s after the round's end.
    now += 58_000;
    expect(await ledger.take('e', 'p', 1, limits)).toEqual({ granted: 0, retryInMs: 2_000, daySpent: false });
    now += 2_000;
    expect((await ledger.take('e', 'p', 4, limits)).granted).toBe(4);
  });

  it('gives back what its own grant did not use, not a later grant\'s; a round that sent more counts them all', async () => {
    let now = 1_000_000;
    const ledger = new LocalRecipientLedger(() => now);
    const limits = { perMinute: 10 };
    const first = await ledger.take('e', 'p', 5, limits);
    now += 10_000;
    const second = await ledger.take('e', 'p', 5, limits);
    // The first round used 2 of its 5: the second grant's 5 stay counted from their own time.
    await ledger.giveBack('e', 'p', 3, limits, first);
    now += 50_000;
    // 60 s after the first grant only its 2 leave the window.
    expect((await ledger.take('e', 'p', 10, limits)).granted).toBe(5);
    now += 10_000;
    // The second grant's round is long over, and it sent 6 (one more than granted): all 6 count from now.
    await ledger.restamp('e', 'p', 6, limits, second);
    expect((await ledger.take('e', 'p', 10, limits)).granted).toBe(0);
    now += 60_000;
    expect((await ledger.take('e', 'p', 10, limits)).granted).toBe(10);
  });
});

describe('Providers', () => {
  const providers = new Providers(checkProviderProfiles([{ id: 'mine', match: ['*.mx.example.net'], egress: ['b'], recipientsPerMinute: 10 }], 'providers', ['a', 'b']), ['a', 'b']);

  it('knows the big providers by their exchangers, one provider for all of its exchangers', () => {
    const ids = (hosts: string[]) => hosts.map((host) => providers.of(host).id);
    expect(ids(['gmail-smtp-in.l.google.com', 'alt4.gmail-smtp-in.l.google.com.', 'ASPMX.L.GOOGLE.COM', 'smtp.google.com'])).toEqual(Array(4).fill('google'));
    expect(ids(['acme-com.mail.protection.outlook.com', 'acme-com.l-v1.mx.microsoft'])).toEqual(['microsoft-365', 'microsoft-365']);
    expect(ids(['eur.olc.protection.outlook.com'])).toEqual(['microsoft-consumer']);
    expect(ids(['mta5.am0.yahoodns.net', 'mx01.mail.icloud.com', 'mx.zoho.eu', 'mx.yandex.net', 'mxs.mail.ru', 'mx00.gmx.net', 'mx01.web.de'])).toEqual([
      'yahoo', 'apple-icloud', 'zoho', 'yandex', 'mail-ru', 'gmx-webde', 'gmx-webde',
    ]);
    expect(ids(['us-smtp-inbound-1.mimecast.com', 'mx0a-00123401.pphosted.com', 'd123456a.ess.barracudanetworks.com'])).toEqual(['mimecast', 'proofpoint', 'barracuda']);
    expect(providers.of('aspmx.l.google.com')).toBe(providers.of('alt1.aspmx.l.google.com'));
  });

  it('tries the given profiles first; an exchanger no profile matches is its own provider with every egress', () => {
    expect(providers.of('mx1.mx.example.net')).toEqual({ id: 'mine', egresses: ['b'], recipientsPerMinute: 10 });
    expect(providers.of('Mail.Example.ORG.')).toEqual({ id: 'mail.example.org', egresses: ['a', 'b'] });
  });

  it('has a source for every built-in row, and no row reaches another row\'s example hosts', () => {
    for (const row of PROVIDER_PROFILES) {
      expect(row.mxSource.length, row.id).toBeGreaterThan(0);
      expect(row.mxSource.every((url) => /^https?:\/\/[^\s]+$/u.test(url)), row.id).toBe(true);
      expect(row.limitsSource.length, row.id).toBeGreaterThan(20);
      expect(row.match.includes('*'), row.id).toBe(false);
    }
    expect(new Set(PROVIDER_PROFILES.map((row) => row.id)).size).toBe(PROVIDER_PROFILES.length);
    expect(checkProviderProfiles(PROVIDER_PROFILES.map(({ mxSource: _m, limitsSource: _l, ...profile }) => profile), 'built-in')).toHaveLength(PROVIDER_PROFILES.length);
    expect(providers.of('mx.zoho.com.evil.example').id).toBe('mx.zoho.com.evil.example');
  });
});
