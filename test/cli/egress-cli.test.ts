// The egress options of the built commands: `check` and `serve` with --smtp-proxy, --smtp-proxy-file,
// --smtp-local-address, --smtp-egress-file, their variables and the config key smtpEgress, against the mail lab and a
// real SOCKS5 proxy (microsocks, its outgoing connections bound to 127.0.0.7). No output of a run, at trace level
// included, holds the proxy's password.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { runCli, startServe, verifyThroughServe } from '../lab/serve-process.js';
import { startSocksProxy, type SocksProxyProcess } from '../lab/socks-proxy.js';
import { MICROSOCKS, needing } from '../lab/system-programs.js';

const PROXY_PASSWORD = 'cli-Proxy-s3cret';
const ROOT_PASSWORD = 'egress-root-password';

let lab: MailLab;
let proxy: SocksProxyProcess;
const proxyIt = needing(MICROSOCKS, 'the command-line tests through a SOCKS5 proxy (microsocks)').it;
let dir: string;

beforeAll(async () => {
  lab = await startMailLab({
    servers: {
      mx: { mailboxes: ['alice'] },
      other: { mailboxes: ['bob'] },
      limited: { engine: 'raw', mailboxes: ['carol'], sourceLimit: { rcpts: 0, reply: '421 4.7.28 Unusual rate of mail from your IP; rate limited' } },
    },
    domains: { 'one-egress.com': ['mx'], 'two-egress.com': ['other'], 'limited-egress.com': ['limited'] },
  });
  if (proxyIt === it) proxy = await startSocksProxy({ username: 'prober', password: PROXY_PASSWORD, bindAddress: '127.0.0.7' });
  dir = mkdtempSync(join(tmpdir(), 'mailverify-egress-'));
});

afterAll(async () => {
  await proxy?.stop();
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => lab.reset());

const run = runCli;

const input = 'alice@one-egress.com\nnobody@one-egress.com\nbob@two-egress.com\n';
const statuses = (stdout: string) => stdout.trim().split('\n').map((line) => (JSON.parse(line) as { status: string }).status);
const labArgs = () => ['--dns-server', lab.dnsAddress, '--smtp-port', String(lab.port), '--allow-private-addresses', '--helo-name', 'probe.egress-lab.com'];
const check = (...flags: string[]) => ['check', '-', '--checks', 'smtp', ...labArgs(), ...flags];
const peers = () => [...lab.peers('mx'), ...lab.peers('other')];

describe('mailverify check with an egress', () => {
  proxyIt('--smtp-proxy: every probe goes through the proxy', async () => {
    const result = await run(check('--smtp-proxy', proxy.url), input);
    expect(result.code).toBe(0);
    expect(statuses(result.stdout)).toEqual(['Success', 'MailboxDoesNotExist', 'Success']);
    expect(new Set(peers())).toEqual(new Set(['127.0.0.7']));
  });

  proxyIt('--smtp-proxy-file with a wrong password: SmtpConnectionFailure and one warning naming the egress, no password anywhere', async () => {
    const file = join(dir, 'proxy-url');
    writeFileSync(file, `${proxy.url.replace(PROXY_PASSWORD, 'Wrong-pa55')}\n`);
    const result = await run(check('--smtp-proxy-file', file), input);
    expect(result.code).toBe(0);
    expect(statuses(result.stdout)).toEqual(Array(3).fill('SmtpConnectionFailure'));
    expect(result.stderr.match(/MAILVERIFY_EGRESS/gu)).toHaveLength(1);
    expect(result.stderr).toContain('egress default (socks5://prober@');
    expect(result.stderr + result.stdout).not.toMatch(/Wrong-pa55|cli-Proxy-s3cret/u);
    expect(peers()).toEqual([]);
  });

  proxyIt('--smtp-local-address and --smtp-egress-file: the connections leave from the addresses given', async () => {
    const bound = await run(check('--smtp-local-address', '127.0.0.5'), input);
    expect(statuses(bound.stdout)).toEqual(['Success', 'MailboxDoesNotExist', 'Success']);
    expect(new Set(peers())).toEqual(new Set(['127.0.0.5']));
    lab.reset();
    const file = join(dir, 'egress.json');
    writeFileSync(file, JSON.stringify([
      { id: 'bound', localAddress: '127.0.0.6' },
      { id: 'proxied', proxy: proxy.url },
    ]));
    const both = await run(check('--smtp-egress-file', file), input);
    expect(statuses(both.stdout)).toEqual(['Success', 'MailboxDoesNotExist', 'Success']);
    // Two exchangers, one connection each at first: the second goes by the egress with fewer open connections.
    expect(new Set(peers())).toEqual(new Set(['127.0.0.6', '127.0.0.7']));
  });

  it('refuses bad egress flags with exit 2, naming the flag, never the password', async () => {
    const file = join(dir, 'bad-egress.json');
    writeFileSync(file, JSON.stringify([{ id: 'a b', localAddress: '127.0.0.5' }]));
    const cases: [string[], RegExp][] = [
      [['--smtp-proxy', 'http://prober:Leaky-pa55@127.0.0.1:8080'], /^mailverify: --smtp-proxy: a proxy URL must begin with socks5:\/\/, not http:\/\//mu],
      [['--smtp-proxy', 'socks5://prober:Leaky-pa55@127.0.0.1:99999'], /^mailverify: --smtp-proxy: /mu],
      [['--smtp-local-address', 'here'], /^mailverify: --smtp-local-address must be an IP address, got here/mu],
      [['--smtp-egress-file', file], /^mailverify: --smtp-egress-file: .*bad-egress\.json\[0\]\.id must be/mu],
      [['--smtp-proxy-file', join(dir, 'missing')], /^mailverify: --smtp-proxy-file: .*missing cannot be read: ENOENT/mu],
      [['--smtp-proxy', `socks5://prober:${PROXY_PASSWORD}@127.0.0.1:1080`, '--smtp-local-address', '127.0.0.5'], /--smtp-proxy and --smtp-local-address both set the egress/u],
    ];
    for (const [flags, message] of cases) {
      const result = await run(check(...flags), input);
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/Leaky-pa55|cli-Proxy-s3cret/u);
      expect(result.stdout).toBe('');
    }
  });
});

describe('mailverify serve with an egress', () => {
  const headers = { authorization: `Basic ${Buffer.from(`root:${ROOT_PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' };

  const verifyThrough = async (origin: string) =>
    (await verifyThroughServe(origin, ROOT_PASSWORD, input.trim().split('\n'))).map((entry) => entry.status);

  proxyIt('MAILVERIFY_SMTP_PROXY_FILE: jobs are verified through the proxy; nothing it writes at trace level holds the password', async () => {
    const file = join(dir, 'serve-proxy-url');
    writeFileSync(file, proxy.url);
    const server = await startServe(
      ['--data-dir', join(dir, 'serve-proxy'), '--log-level', 'trace', '--metrics', ...labArgs()],
      { MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD, MAILVERIFY_SMTP_PROXY_FILE: file },
    );
    try {
      expect(await verifyThrough(server.origin)).toEqual(['Success', 'MailboxDoesNotExist', 'Success']);
      expect(new Set(peers())).toEqual(new Set(['127.0.0.7']));
      const metrics = await (await fetch(`${server.origin}/metrics`, { headers })).text();
      expect(metrics).not.toContain(PROXY_PASSWORD);
    } finally {
      await server.stop();
    }
    expect(server.stderr()).not.toContain(PROXY_PASSWORD);
    expect(server.stderr().length).toBeGreaterThan(0);
  });

  it('the config key smtpEgress; two egress options at once are a usage error naming both', async () => {
    const config = join(dir, 'mailverify.json');
    writeFileSync(config, JSON.stringify({ smtpEgress: [{ id: 'second-address', localAddress: '127.0.0.8' }] }));
    const server = await startServe(['--data-dir', join(dir, 'serve-config'), '--log-level', 'silent', '--config', config, ...labArgs()], {
      MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD,
    });
    try {
      expect(await verifyThrough(server.origin)).toEqual(['Success', 'MailboxDoesNotExist', 'Success']);
      expect(new Set(peers())).toEqual(new Set(['127.0.0.8']));
    } finally {
      await server.stop();
    }
    const both = await run(['serve', '--port', '0', '--data-dir', join(dir, 'serve-both'), '--config', config, '--smtp-proxy', `socks5://prober:${PROXY_PASSWORD}@127.0.0.1:1080`], '', {
      MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD,
    });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--smtp-proxy and .*mailverify\.json: smtpEgress set the same option|mailverify\.json: smtpEgress and --smtp-proxy set the same option/u);
    expect(both.stderr).not.toContain(PROXY_PASSWORD);
    const bad = await run(['serve', '--port', '0', '--data-dir', join(dir, 'serve-bad'), '--smtp-proxy', 'socks4://prober:Leaky-pa55@127.0.0.1'], '', {
      MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--smtp-proxy: a proxy URL must begin with socks5:\/\//u);
    expect(bad.stderr).not.toContain('Leaky-pa55');
  });

  it('a reply about the prober: one warning in the log, mailverify_egress_cooling in /metrics, and no verdict from it', async () => {
    const server = await startServe(['--data-dir', join(dir, 'serve-cooling'), '--log-level', 'warn', '--metrics', '--smtp-local-address', '127.0.0.9', ...labArgs()], {
      MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD,
      MAILVERIFY_SMTP_PROVIDERS_FILE: providersFile(),
    });
    try {
      const submitted = await fetch(`${server.origin}/v2.7/email-validations?waitTime=20000`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ entries: [{ inputData: 'carol@limited-egress.com' }] }),
      });
      const body = (await submitted.json()) as { entries: { data: { status: string }[] } };
      // One egress: the refused recipient keeps the reply's status (ServerTemporaryUnavailable), never a verdict.
      expect(body.entries.data.map((entry) => entry.status)).toEqual(['ServerTemporaryUnavailable']);
      const metrics = await (await fetch(`${server.origin}/metrics`, { headers })).text();
      expect(metrics).toMatch(/^mailverify_egress_cooling\{egress="default",provider="lab-limited"\} 1$/mu);
    } finally {
      await server.stop();
    }
    const warnings = server.stderr().split('\n').filter((line) => line.includes('cools for 60 s'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('egress default cools for 60 s with provider lab-limited after the reply 421');
  });

  function providersFile(): string {
    const file = join(dir, 'providers.json');
    writeFileSync(file, JSON.stringify([{ id: 'lab-limited', match: ['limited.mx.lab.test'] }]));
    return file;
  }
});
