// The options of `mailverify serve`, defined once (packages/server/src/cli/serve-options.ts): flags, environment
// variables and the config file with their precedence and their errors, and the table of docs/options.md, which must
// be the generated one.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVE_OPTIONS, optionsTable, resolveServeSettings, serveFlags, withOptionsTable } from '../../packages/server/src/cli/serve-options.js';
import type { StandaloneOptions } from '../../packages/server/src/server/app.js';
import { DEFAULT_RETENTION_MS } from '../../packages/server/src/server/defaults.js';
import { makeTlsLab } from '../lab/tls-ca.js';

const dir = mkdtempSync(join(tmpdir(), 'mailverify-serve-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The settings of a command line, an environment and, when given, a config file with `config` in it. */
function settings(argv: string[], env: Record<string, string> = {}, config?: unknown) {
  const args = [...argv];
  if (config !== undefined) {
    const file = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
    args.push('--config', file);
  }
  const { values } = parseArgs({ args, options: serveFlags(), allowPositionals: false });
  return resolveServeSettings(values, env);
}

const failure = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('no error');
};

describe('serve options: one definition', () => {
  it('the table of docs/options.md is the generated one (npm run docs:options writes it)', () => {
    const readme = readFileSync(new URL('../../docs/options.md', import.meta.url), 'utf8');
    expect(withOptionsTable(readme)).toBe(readme);
    expect(readme).toContain(optionsTable());
  });

  it('the example config file of docs/options.md holds only keys of the table', () => {
    const readme = readFileSync(new URL('../../docs/options.md', import.meta.url), 'utf8');
    const example = /```json\n([\s\S]*?)```/.exec(readme)![1]!;
    const keys = SERVE_OPTIONS.map((option) => option.key);
    expect(Object.keys(JSON.parse(example)).filter((key) => !keys.includes(key))).toEqual([]);
  });

  it('flags, variables and keys are unique, and each variable is MAILVERIFY_ and the key in capitals', () => {
    for (const field of ['flag', 'env', 'key'] as const) {
      const names = SERVE_OPTIONS.flatMap((option) => (option[field] === undefined ? [] : [option[field]]));
      expect(new Set(names).size).toBe(names.length);
    }
    for (const option of SERVE_OPTIONS) {
      // Keys of JSON values (override rules, qualityLevels, classifications) are the config file's only.
      if (option.key === undefined || (option.flag === undefined && option.env === undefined)) continue;
      expect(option.env).toBe(`MAILVERIFY_${option.key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`);
    }
  });

  it('every target is an option of createServer (a misspelt one would be silently dropped)', () => {
    const known: Record<keyof StandaloneOptions, true> = {
      store: true, dataDir: true, rootUsername: true, rootPassword: true, basePath: true, verifier: true, defaultQuality: true,
      defaultRetentionMs: true, tokenLifetimeMs: true, tokenSecret: true, bodyLimit: true, maxEntriesPerJob: true, fileImport: true,
      callbackTimeoutMs: true, clock: true, metrics: true, captcha: true, rateLimits: true, credits: true, logger: true, trustProxy: true,
      https: true, requestTimeoutMs: true, headersTimeoutMs: true, idleTimeoutMs: true, overrides: true, qualityLevels: true, sharedCounters: true,
      cluster: true, minBodyRate: true, bodyRateGraceMs: true, maxConnectionsPerAddress: true, maxClientConnections: true, console: true,
    };
    for (const { target } of SERVE_OPTIONS) {
      const [scope, name] = target.split('.');
      if (scope === 'server') expect(Object.keys(known)).toContain(name);
      else expect(['listen', 'logLevel', 'configFile', 'store']).toContain(scope);
    }
  });
});

describe('serve options: precedence', () => {
  it('defaults: the server\'s own, applied', () => {
    const { server, listen, logLevel } = settings([]);
    expect(listen).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(logLevel).toBe('info');
    expect(server).toMatchObject({ defaultRetentionMs: DEFAULT_RETENTION_MS, rootUsername: 'root', trustProxy: false, verifier: { checks: 'smtp', quality: 'Standard' } });
    expect(server.rootPassword).toBeUndefined();
  });

  it('the console: on by default; off by --no-console, MAILVERIFY_CONSOLE=false or console: false in the config file', () => {
    expect(settings([]).server.console).toBe(true);
    expect(settings(['--no-console']).server.console).toBe(false);
    expect(settings([], { MAILVERIFY_CONSOLE: 'false' }).server.console).toBe(false);
    expect(settings([], {}, { console: false }).server.console).toBe(false);
  });

  it('rate limits: off by default; on by --rate-limits, MAILVERIFY_RATE_LIMITS or rateLimits in the config file', () => {
    expect(settings([]).server.rateLimits).toBe(false);
    expect(settings(['--rate-limits']).server.rateLimits).toEqual({});
    expect(settings([], { MAILVERIFY_RATE_LIMITS: 'true' }).server.rateLimits).toEqual({});
    expect(settings([], {}, { rateLimits: true }).server.rateLimits).toEqual({});
  });

  it('rate limits: the rate, the burst and the requests in flight, each by flag, variable or key, with --rate-limits', () => {
    expect(settings(['--rate-limits', '--rate-limit-per-second', '0.5', '--rate-limit-burst', '3', '--rate-limit-in-flight', '2']).server.rateLimits)
      .toEqual({ perSecond: 0.5, burst: 3, legacyInFlight: 2 });
    expect(settings([], { MAILVERIFY_RATE_LIMITS: '1', MAILVERIFY_RATE_LIMIT_PER_SECOND: '20', MAILVERIFY_RATE_LIMIT_BURST: '40' }).server.rateLimits)
      .toEqual({ perSecond: 20, burst: 40 });
    expect(settings([], {}, { rateLimits: true, rateLimitPerSecond: 0.01, rateLimitInFlight: 1 }).server.rateLimits).toEqual({ perSecond: 0.01, legacyInFlight: 1 });
  });

  it('a rate limit without --rate-limits, or a rate that is not above 0, is a usage error', () => {
    expect(failure(() => settings(['--rate-limit-burst', '30']))).toBe('--rate-limit-burst needs --rate-limits (or MAILVERIFY_RATE_LIMITS, or the key rateLimits): there are no rate limits without it');
    expect(failure(() => settings([], { MAILVERIFY_RATE_LIMIT_PER_SECOND: '2' }))).toMatch(/^MAILVERIFY_RATE_LIMIT_PER_SECOND needs --rate-limits/);
    expect(failure(() => settings(['--rate-limits', '--rate-limit-per-second', '0']))).toMatch(/^--rate-limit-per-second must be a number above 0 .* got 0$/);
    expect(failure(() => settings(['--rate-limits', '--rate-limit-per-second', '1e3']))).toMatch(/^--rate-limit-per-second must be/);
    expect(failure(() => settings(['--rate-limits'], {}, { rateLimitPerSecond: '6' }))).toMatch(/config-\w+\.json: rateLimitPerSecond must be .* got "6"$/);
    expect(failure(() => settings(['--rate-limits', '--rate-limit-burst', '0']))).toMatch(/^--rate-limit-burst must be a whole number from 1/);
  });

  it('a flag wins over its variable, a variable over the config file, the config file over the default', () => {
    const config = { port: 1001, host: '10.0.0.1', retention: '2.00:00:00', maxEntriesPerJob: 7 };
    const env = { MAILVERIFY_PORT: '1002', MAILVERIFY_HOST: '10.0.0.2' };
    const all = settings(['--port', '1003'], env, config);
    expect(all.listen).toEqual({ host: '10.0.0.2', port: 1003 });
    expect(all.server).toMatchObject({ defaultRetentionMs: 2 * 86_400_000, maxEntriesPerJob: 7 });
    expect(all.sources.get('listen.port')).toBe('--port');
    expect(all.sources.get('listen.host')).toBe('MAILVERIFY_HOST');
    expect(all.sources.get('server.maxEntriesPerJob')).toMatch(/config-.*\.json: maxEntriesPerJob$/);
    // An empty variable is unset.
    expect(settings([], { MAILVERIFY_PORT: '' }, config).listen.port).toBe(1001);
  });

  it('MAILVERIFY_CONFIG names the file when --config does not', () => {
    const file = join(dir, 'by-variable.json');
    writeFileSync(file, JSON.stringify({ checks: 'dns' }));
    expect(settings([], { MAILVERIFY_CONFIG: file }).server.verifier!.checks).toBe('dns');
  });

  it('reads each type from text and from JSON: lists, switches, sizes, durations, proxies, paths', () => {
    const fromFlags = settings([
      '--dns-server', '127.0.0.1:5353', '--dns-server', '[::1]:53', '--allow-private-addresses', '--no-provider-rules', '--refuse', 'quoted',
      '--max-body-size', '1MiB', '--token-lifetime', '0:10:00', '--trust-proxy', '10.0.0.0/8,loopback', '--checks', 'syntax',
    ]);
    expect(fromFlags.server).toMatchObject({
      bodyLimit: 1024 * 1024,
      tokenLifetimeMs: 600_000,
      trustProxy: ['10.0.0.0/8', 'loopback'],
      verifier: { checks: 'syntax', allowPrivateAddresses: true, dns: { servers: ['127.0.0.1:5353', '[::1]:53'] }, syntax: { allowQuotedLocalPart: false, providerRules: false } },
    });
    const fromEnv = settings([], { MAILVERIFY_DNS_SERVERS: '9.9.9.9, 1.1.1.1', MAILVERIFY_PROVIDER_RULES: 'false', MAILVERIFY_TRUST_PROXY: '2', MAILVERIFY_MAX_BODY_SIZE: '2048' });
    expect(fromEnv.server).toMatchObject({ bodyLimit: 2048, trustProxy: 2, verifier: { dns: { servers: ['9.9.9.9', '1.1.1.1'] }, syntax: { providerRules: false } } });
    const fromFile = settings([], {}, { trustProxy: true, refuse: ['literal', 'international'], maxUploadSize: '8 MiB', dataDir: 'data', allowPrivateAddresses: true });
    expect(fromFile.server).toMatchObject({
      trustProxy: true,
      dataDir: join(dir, 'data'),
      fileImport: { maxFileBytes: 8 * 1024 * 1024 },
      verifier: { allowPrivateAddresses: true, syntax: { allowAddressLiteral: false, allowInternationalLocalPart: false } },
    });
  });

  it('secrets from a variable or a file, never both', () => {
    const file = join(dir, 'password');
    writeFileSync(file, 'from a file\n');
    expect(settings(['--root-password-file', file]).server.rootPassword).toBe('from a file');
    expect(settings([], { MAILVERIFY_ROOT_PASSWORD: 'from the environment' }).server.rootPassword).toBe('from the environment');
    expect(settings([], { MAILVERIFY_TOKEN_SECRET_FILE: file }).server.tokenSecret).toBe('from a file');
    const both = failure(() => settings(['--root-password-file', file], { MAILVERIFY_ROOT_PASSWORD: 'hunter2' }));
    expect(both).toBe('MAILVERIFY_ROOT_PASSWORD and --root-password-file set the same option: give one of them');
  });
});

describe('serve options: CAPTCHA siteverify URLs', () => {
  it('default to the providers\' public endpoints; a flag, variable or key sets one, loopback included', () => {
    expect(settings([]).server.captcha).toEqual({
      siteverifyUrls: {
        turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
        reCaptchaV2: 'https://www.google.com/recaptcha/api/siteverify',
        reCaptchaV3: 'https://www.google.com/recaptcha/api/siteverify',
        hCaptcha: 'https://api.hcaptcha.com/siteverify',
      },
    });
    const given = settings(
      ['--turnstile-siteverify-url', 'http://127.0.0.1:9000/t', '--recaptcha-v2-siteverify-url', 'http://[::1]:9000/r2'],
      { MAILVERIFY_RECAPTCHA_V3_SITEVERIFY_URL: 'https://captcha.internal/r3' },
      { hcaptchaSiteverifyUrl: 'http://localhost:9000/h' },
    );
    expect(given.server.captcha!.siteverifyUrls).toEqual({
      turnstile: 'http://127.0.0.1:9000/t',
      reCaptchaV2: 'http://[::1]:9000/r2',
      reCaptchaV3: 'https://captcha.internal/r3',
      hCaptcha: 'http://localhost:9000/h',
    });
  });

  it('a URL that is not absolute http(s) is a usage error', () => {
    expect(failure(() => settings(['--hcaptcha-siteverify-url', 'api.hcaptcha.com/siteverify']))).toBe(
      '--hcaptcha-siteverify-url must be an absolute http or https URL, got api.hcaptcha.com/siteverify',
    );
    expect(failure(() => settings([], { MAILVERIFY_TURNSTILE_SITEVERIFY_URL: 'ftp://example.com/x' }))).toMatch(/^MAILVERIFY_TURNSTILE_SITEVERIFY_URL must be an absolute http or https URL/);
    expect(failure(() => settings([], {}, { recaptchaV2SiteverifyUrl: 42 }))).toMatch(/: recaptchaV2SiteverifyUrl must be an absolute http or https URL, got 42$/);
  });
});

describe('serve options: errors name where the value came from', () => {
  it('a bad value names the flag, the variable or the key', () => {
    expect(failure(() => settings(['--port', '70000']))).toBe('--port must be a TCP port number from 0 to 65535, got 70000');
    expect(failure(() => settings([], { MAILVERIFY_RETENTION: '1 day' }))).toBe(
      'MAILVERIFY_RETENTION must be a duration [d.]hh:mm:ss from 00:05:00 to 30.00:00:00, got 1 day',
    );
    expect(failure(() => settings([], {}, { checks: 'mx' }))).toMatch(/config-\w+\.json: checks must be one of syntax, dns, smtp, got "mx"$/);
    expect(failure(() => settings(['--trust-proxy', '10.0.0.300']))).toMatch(/^--trust-proxy must be true, false, a hop count/);
    expect(failure(() => settings(['--dns-server', '9.9.9.9', '--dns-server', '9.9.9.9:99999']))).toBe(
      '--dns-server must be an IP address with an optional port (9.9.9.9, [2620:fe::fe]:53), got 9.9.9.9:99999',
    );
    expect(failure(() => settings([], {}, { dnsServers: ['9.9.9.9', 53] }))).toMatch(/: dnsServers must be an IP address with an optional port .*, got 53$/);
    expect(failure(() => settings(['--max-body-size', '64MB']))).toBe('--max-body-size must be a size: bytes, or a whole number with KiB, MiB or GiB, got 64MB');
  });

  it('a value of the wrong type in the config file names its key', () => {
    expect(failure(() => settings([], {}, { port: '8080' }))).toMatch(/: port must be a TCP port number from 0 to 65535, got "8080"$/);
    expect(failure(() => settings([], {}, { dnsServers: '9.9.9.9' }))).toMatch(/: dnsServers must be IP addresses with optional ports, got "9.9.9.9"$/);
    expect(failure(() => settings([], {}, { allowPrivateAddresses: 'yes' }))).toMatch(/: allowPrivateAddresses must be true or false, got "yes"$/);
  });

  it('an unknown key is refused with the key probably meant; a file that is not a JSON object too', () => {
    expect(failure(() => settings([], {}, { prot: 8080 }))).toMatch(/\.json: unknown key "prot" \(did you mean "port"\?\)$/);
    expect(failure(() => settings([], {}, { somethingElse: 1 }))).toMatch(/\.json: unknown key "somethingElse"$/);
    expect(failure(() => settings([], {}, '{"port": 80,}'))).toMatch(/\.json is not JSON/);
    expect(failure(() => settings([], {}, [1]))).toMatch(/\.json: must be a JSON object of options$/);
    expect(failure(() => settings(['--config', join(dir, 'missing.json')]))).toMatch(/^--config .*missing\.json cannot be read: ENOENT$/);
  });

  it('never prints a secret, not even a bad one', () => {
    const message = failure(() => settings([], {}, { rootPasswordFile: join(dir, 'no-such-file') }));
    expect(message).toMatch(/: rootPasswordFile cannot be read: ENOENT \(.*no-such-file\)$/);
    const empty = join(dir, 'empty-secret');
    writeFileSync(empty, '\n');
    expect(failure(() => settings(['--token-secret-file', empty]))).toMatch(/^--token-secret-file is an empty file/);
  });

  it('an unknown MAILVERIFY_ variable is reported, with the one probably meant', () => {
    expect(settings([], { MAILVERIFY_PROT: '80', MAILVERIFY_PORT: '81' }).warnings).toEqual([
      'the environment variable MAILVERIFY_PROT is no option of serve (did you mean MAILVERIFY_PORT?); it is ignored',
    ]);
  });

  it('TLS certificate and key go together', () => {
    const cert = join(dir, 'cert.pem');
    writeFileSync(cert, 'PEM');
    expect(failure(() => settings(['--tls-cert', cert]))).toBe('--tls-cert and --tls-key (or their variables or keys) go together');
  });

  it('a client CA: CA certificates, one or more, only with a certificate and key', () => {
    const tls = makeTlsLab();
    try {
      const cert = ['--tls-cert', tls.server.cert.path, '--tls-key', tls.server.key.path];
      const bundle = tls.file('bundle.pem', `${tls.serverCa.cert.pem}${tls.clientCa.cert.pem}`);
      expect(settings([...cert, '--tls-client-ca', tls.clientCa.cert.path]).server.https).toEqual({
        cert: tls.server.cert.pem.trimEnd(),
        key: tls.server.key.pem.trimEnd(),
        clientCa: tls.clientCa.cert.pem.trimEnd(),
      });
      expect(settings(cert, { MAILVERIFY_TLS_CLIENT_CA: bundle }).server.https?.clientCa).toBe(`${tls.serverCa.cert.pem}${tls.clientCa.cert.pem}`.trimEnd());
      expect(settings([], {}, { tlsCert: tls.server.cert.path, tlsKey: tls.server.key.path, tlsClientCa: tls.clientCa.cert.path }).server.https?.clientCa).toBe(tls.clientCa.cert.pem.trimEnd());
      // Without them: HTTPS is what asks for client certificates.
      const needs = 'needs --tls-cert and --tls-key (or their variables or keys): client certificates are asked for over HTTPS only';
      expect(failure(() => settings(['--tls-client-ca', tls.clientCa.cert.path]))).toBe(`--tls-client-ca ${needs}`);
      expect(failure(() => settings([], { MAILVERIFY_TLS_CLIENT_CA: tls.clientCa.cert.path }))).toBe(`MAILVERIFY_TLS_CLIENT_CA ${needs}`);
      expect(failure(() => settings(['--tls-cert', tls.server.cert.path, '--tls-client-ca', tls.clientCa.cert.path]))).toBe('--tls-cert and --tls-key (or their variables or keys) go together');
      // A file TLS would take without a word and then verify no one: refused at start.
      const client = tls.clientCertificate('alice');
      expect(failure(() => settings([...cert, '--tls-client-ca', client.cert.path]))).toBe(`--tls-client-ca holds a certificate that is not a CA (CN=alice) (${client.cert.path})`);
      expect(failure(() => settings([...cert, '--tls-client-ca', tls.file('with-key.pem', `${tls.clientCa.cert.pem}${tls.clientCa.key.pem}`)]))).toMatch(/^--tls-client-ca must hold only certificates, not a PRIVATE KEY \(/);
      expect(failure(() => settings([...cert, '--tls-client-ca', tls.file('text.pem', 'not a certificate')]))).toMatch(/^--tls-client-ca holds no PEM certificate \(/);
      const broken = tls.file('broken.pem', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
      expect(failure(() => settings([...cert, '--tls-client-ca', broken]))).toBe(`--tls-client-ca holds a certificate that cannot be read (${broken})`);
      expect(failure(() => settings([...cert, '--tls-client-ca', join(tls.dir, 'missing.pem')]))).toMatch(/^--tls-client-ca cannot be read: ENOENT/);
    } finally {
      tls.close();
    }
  });
});

describe('serve options: credits', () => {
  it('off by default; --credits with its amounts as given, decimals kept', () => {
    expect(settings([]).server.credits).toBeUndefined();
    expect(settings(['--credits']).server.credits).toEqual({});
    const { server } = settings(['--credits', '--free-daily-credits', '2.5', '--monthly-max-credits', '1000', '--unit-price-high', '0.125'], { MAILVERIFY_UNIT_PRICE_EXTREME: '3.75' });
    expect(server.credits).toEqual({ freeDailyCredits: 2.5, monthlyMaxCredits: 1000, unitPrices: { High: 0.125, Extreme: 3.75 } });
    expect(settings([], {}, { credits: true, unitPriceStandard: 0.5 }).server.credits).toEqual({ unitPrices: { Standard: 0.5 } });
  });

  it('an amount without --credits, with more than six decimal places, or not a number, is a usage error', () => {
    expect(failure(() => settings(['--free-daily-credits', '5']))).toBe('--free-daily-credits needs --credits (or MAILVERIFY_CREDITS, or the key credits): credits are not accounted without it');
    expect(failure(() => settings(['--credits', '--unit-price-standard', '0.0000001']))).toMatch(/^--unit-price-standard must be a number of credits .* got 0\.0000001$/);
    expect(failure(() => settings(['--credits', '--unit-price-high=-1']))).toMatch(/^--unit-price-high must be/);
    expect(failure(() => settings(['--credits', '--monthly-max-credits', '1e3']))).toMatch(/^--monthly-max-credits must be/);
  });
});

describe('serve options: override rules (config file only)', () => {
  it('absent: no option (the list kept in the data folder stays); the key: the rules, checked, in order', () => {
    expect(settings([]).server.overrides).toBeUndefined();
    const rules = [
      { match: '*@example.com', classification: 'Deliverable' },
      { match: 'john@bücher.de', classification: 'VIP' },
    ];
    const { server, sources } = settings([], {}, { overrides: rules });
    expect(server.overrides).toEqual(rules);
    expect(sources.get('server.overrides')).toMatch(/config-\w+\.json: overrides$/);
    expect(settings([], {}, { overrides: [] }).server.overrides).toEqual([]);
  });

  it('a malformed rule is a usage error naming the key and the rule', () => {
    expect(failure(() => settings([], {}, { overrides: [{ match: 'a@b.c', classification: 'Risky' }, { match: '', classification: 'Risky' }] }))).toMatch(
      /config-\w+\.json: overrides\[1\]\.match must be a non-empty string, got ""$/,
    );
    expect(failure(() => settings([], {}, { overrides: [{ match: 'a@b.c' }] }))).toMatch(/: overrides\[0\]\.classification must be a non-empty string, got nothing$/);
    expect(failure(() => settings([], {}, { overrides: [{ match: 'a@b.c', classification: 'Risky', why: 1 }] }))).toMatch(/overrides\[0\] has an unknown key "why"/);
    expect(failure(() => settings([], {}, { overrides: { match: 'a@b.c', classification: 'Risky' } }))).toMatch(/: overrides must be an array/);
    const many = Array.from({ length: 10_001 }, (_, i) => ({ match: `u${i}@example.com`, classification: 'Risky' }));
    expect(failure(() => settings([], {}, { overrides: many }))).toMatch(/: overrides has 10001 rules, more than 10000$/);
  });

  it('has no flag and no variable: a MAILVERIFY_OVERRIDES variable is reported as no option', () => {
    expect(Object.keys(serveFlags())).not.toContain('overrides');
    expect(settings([], { MAILVERIFY_OVERRIDES: '[]' }).warnings).toEqual([expect.stringMatching(/^the environment variable MAILVERIFY_OVERRIDES is no option of serve/)]);
  });
});

describe('serve options: custom quality levels and classification names (config file only)', () => {
  const PATIENT = { id: 'Patient', passes: 3, passDelay: 200, commandTimeout: 10_000, unitPrice: 0.5 };

  it('qualityLevels: the levels, a display name defaulting to the id; quality may name one without case', () => {
    const { server } = settings(['--quality', 'PATIENT'], {}, { qualityLevels: [PATIENT, { id: 'quick', displayName: 'Quick' }] });
    expect(server.qualityLevels).toEqual([{ ...PATIENT, displayName: 'Patient' }, { id: 'quick', displayName: 'Quick' }]);
    // The default is written as configured, and it is the verifier's own level.
    expect(server.defaultQuality).toBe('Patient');
    expect(server.verifier!.quality).toEqual({ ...PATIENT, displayName: 'Patient' });
    expect(settings([], {}, { quality: 'high', qualityLevels: [PATIENT] }).server).toMatchObject({ defaultQuality: 'High', verifier: { quality: 'High' } });
  });

  it('a bad level names the key, the item and the field', () => {
    const level = (levels: unknown): string => failure(() => settings([], {}, { qualityLevels: levels }));
    expect(level({ id: 'a' })).toMatch(/config-\w+\.json: qualityLevels must be an array of quality levels, got \{"id":"a"\}$/);
    expect(level([PATIENT, { id: 'b', passes: 0 }])).toMatch(/config-\w+\.json: qualityLevels\[1\]\.passes must be an integer from 1 to 100, got 0$/);
    expect(level([{ id: 'extreme' }])).toMatch(/qualityLevels\[0\]\.id must be a name other than Standard, High and Extreme, got "extreme"$/);
    expect(level([{ id: 'a' }, { id: 'A' }])).toMatch(/qualityLevels\[1\]\.id "A" is the id of item 0 too/);
    expect(level([{ passes: 2 }])).toMatch(/qualityLevels\[0\]\.id is required/);
    expect(level([{ id: 'a', timeout: 5 }])).toMatch(/qualityLevels\[0\] has an unknown field "timeout"/);
    expect(level([{ id: 'a', unitPrice: 1.0000001 }])).toMatch(/qualityLevels\[0\]\.unitPrice must be a number of credits .* at most six decimal places/);
    expect(failure(() => settings(['--quality', 'slow'], {}, { qualityLevels: [PATIENT] }))).toBe('--quality must be one of Standard, High, Extreme, Patient, got slow');
    expect(failure(() => settings([], { MAILVERIFY_QUALITY: 'Patient' }))).toBe('MAILVERIFY_QUALITY must be one of Standard, High, Extreme, got Patient');
  });

  it('classifications: names by status code for the verifier; an unknown status or an empty name is refused', () => {
    const names = { MailboxIsDea: 'Disposable', Success: 'Good' };
    expect(settings([], {}, { classifications: names }).server.verifier!.classifications).toEqual(names);
    const bad = (value: unknown): string => failure(() => settings([], {}, { classifications: value }));
    expect(bad(['Success'])).toMatch(/config-\w+\.json: classifications must be an object mapping status codes to classification names, got \["Success"\]$/);
    expect(bad({ MailboxIsDEA: 'x' })).toMatch(/config-\w+\.json: classifications has "MailboxIsDEA", which is not a status code \(did you mean "MailboxIsDea"\?\)$/);
    expect(bad({ Success: '' })).toMatch(/config-\w+\.json: classifications\.Success must be a non-empty string, got ""$/);
  });

  it('neither has a flag or a variable', () => {
    for (const key of ['qualityLevels', 'classifications']) {
      const option = SERVE_OPTIONS.find((row) => row.key === key)!;
      expect([option.flag, option.env]).toEqual([undefined, undefined]);
    }
    expect(settings([], { MAILVERIFY_QUALITY_LEVELS: '[]' }).warnings).toEqual([expect.stringContaining('MAILVERIFY_QUALITY_LEVELS is no option of serve')]);
  });
});
