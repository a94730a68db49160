// `mailverify doctor` from the built command against the mail lab (its DNS server holds the PTR, A, SPF and DNSBL
// records) and a real SOCKS5 proxy (microsocks, its outgoing connections bound to 127.0.0.57): the report's lines,
// --json, the exit codes, and no proxy password in any output.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { runCli } from '../lab/serve-process.js';
import { startSocksProxy, type SocksProxyProcess } from '../lab/socks-proxy.js';
import { MICROSOCKS, needing } from '../lab/system-programs.js';

const PROXY_PASSWORD = 'doctor-cli-Pr0xy-secret';

let lab: MailLab;
let proxy: SocksProxyProcess;
const proxyIt = needing(MICROSOCKS, 'the doctor command test of a SOCKS5 proxy (microsocks)').it;
let dir: string;

beforeAll(async () => {
  lab = await startMailLab({
    servers: { mx: { mailboxes: [] } },
    domains: {
      'probe-doctor.com': ['mx'],
      'closed-doctor.com': ['refused'],
      '60.0.0.127.in-addr.arpa': { ptr: ['probe.doctor-lab.com'] },
      'probe.doctor-lab.com': { a: ['127.0.0.60'] },
      '61.0.0.127.in-addr.arpa': { ptr: ['probe61.doctor-lab.com'] },
      'probe61.doctor-lab.com': { a: ['127.0.0.61'] },
      'doctor-lab.com': { txt: ['v=spf1 ip4:127.0.0.60 ip4:127.0.0.61 ~all'] },
      '61.0.0.127.bl.example-dnsbl.com': { a: ['127.0.0.2'] },
    },
  });
  if (proxyIt === it) proxy = await startSocksProxy({ username: 'prober', password: PROXY_PASSWORD, bindAddress: '127.0.0.57' });
  dir = mkdtempSync(join(tmpdir(), 'mailverify-doctor-'));
});

afterAll(async () => {
  await proxy?.stop();
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => lab.reset());

const labArgs = (...more: string[]) => [
  'doctor',
  '--dns-server',
  lab.dnsAddress,
  '--dns-timeout',
  '1000',
  '--smtp-port',
  String(lab.port),
  '--allow-private-addresses',
  '--helo-name',
  'probe.doctor-lab.com',
  '--mail-from',
  'bounce@doctor-lab.com',
  '--probe-domain',
  'probe-doctor.com',
  '--dnsbl',
  'bl.example-dnsbl.com,other.example-dnsbl.com',
  ...more,
];

const LINE = /^(ok|warn|fail) {2}(\S+) {2}(proxy|public-address|ptr|helo|spf|dnsbl|port25) {2}(\S.*)$/u;

function lines(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => {
      const match = LINE.exec(line);
      expect(match, line).not.toBeNull();
      return match!.slice(1);
    });
}

describe('mailverify doctor', () => {
  it('all ok: one line per check, exit 0', async () => {
    const result = await runCli(labArgs('--smtp-local-address', '127.0.0.60'));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const rows = lines(result.stdout);
    expect(rows.map(([result, egress, check]) => `${result} ${egress} ${check}`)).toEqual([
      'ok default public-address',
      'ok default ptr',
      'ok default helo',
      'ok default spf',
      'ok default dnsbl',
      'ok default port25',
    ]);
    expect(result.stdout).toContain('ok  default  ptr  127.0.0.60 → probe.doctor-lab.com → 127.0.0.60\n');
    expect(lab.stats('mx').transactions).toBe(0);
  });

  it('--json: an array of { egress, check, result, detail }; a failure exits 1, each warning and failure says what to do', async () => {
    const file = join(dir, 'egresses.json');
    writeFileSync(
      file,
      JSON.stringify([
        { id: 'one', localAddress: '127.0.0.60' },
        { id: 'two', localAddress: '127.0.0.61', heloName: 'probe.doctor-lab.com' },
      ]),
    );
    const result = await runCli(labArgs('--smtp-egress-file', file, '--json'));
    expect(result.code).toBe(1);
    const rows = JSON.parse(result.stdout) as Array<Record<string, string>>;
    expect(rows.length).toBe(12);
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(['egress', 'check', 'result', 'detail']);
      if (row.result !== 'ok') expect(row.detail).toMatch(/ — \S/);
    }
    expect(rows.filter((row) => row.egress === 'one').every((row) => row.result === 'ok')).toBe(true);
    const two = Object.fromEntries(rows.filter((row) => row.egress === 'two').map((row) => [row.check, row.result]));
    // Its PTR name is not its HELO name, the HELO name is another address's, it is listed.
    expect(two).toEqual({ 'public-address': 'ok', ptr: 'ok', helo: 'fail', spf: 'ok', dnsbl: 'fail', port25: 'ok' });
  });

  it('port 25 refused: exit 1, the fix names --smtp-proxy; without a known address the checks that need it warn', async () => {
    const result = await runCli(labArgs('--probe-domain', 'closed-doctor.com'));
    expect(result.code).toBe(1);
    const rows = lines(result.stdout);
    expect(rows.map(([result, , check]) => `${result} ${check}`)).toEqual([
      'warn public-address',
      'warn ptr',
      'warn helo',
      'warn spf',
      'warn dnsbl',
      'fail port25',
    ]);
    expect(rows.at(-1)![3]).toMatch(/ — outbound port 25 is closed here .*--smtp-proxy/);
  });

  proxyIt('--public-address gives the address; a SOCKS5 proxy with a wrong password fails, its password appears nowhere', async () => {
    const file = join(dir, 'proxy-url');
    writeFileSync(file, `${proxy.url.replace(PROXY_PASSWORD, 'Wrong-Pa55-doctor')}\n`);
    const result = await runCli(labArgs('--smtp-proxy-file', file, '--public-address', '127.0.0.60'));
    expect(result.code).toBe(1);
    for (const output of [result.stdout, result.stderr]) {
      expect(output).not.toContain(PROXY_PASSWORD);
      expect(output).not.toContain('Wrong-Pa55-doctor');
    }
    const rows = lines(result.stdout);
    expect(rows[0]!.slice(0, 3)).toEqual(['fail', 'default', 'proxy']);
    expect(rows[0]![3]).toContain(`socks5://prober@127.0.0.1:${proxy.port}`);
    expect(rows[1]!.slice(0, 3)).toEqual(['ok', 'default', 'public-address']);
    expect(rows[1]![3]).toBe("127.0.0.60 (the egress's publicAddress)");

    const good = await runCli(labArgs('--smtp-proxy', proxy.url, '--public-address', '127.0.0.60'));
    expect(good.stdout).not.toContain(PROXY_PASSWORD);
    expect(good.stderr).not.toContain(PROXY_PASSWORD);
    const goodRows = lines(good.stdout);
    expect(goodRows[0]!.slice(0, 3)).toEqual(['ok', 'default', 'proxy']);
    // The exchanger saw the proxy's address, not the one given.
    expect(goodRows[1]![0]).toBe('warn');
    expect(goodRows[1]![3]).toContain('saw 127.0.0.57');
    expect(goodRows.at(-1)!.slice(0, 3)).toEqual(['ok', 'default', 'port25']);
  });

  it('without --allow-private-addresses the lab is not used: exit 1', async () => {
    const args = labArgs('--smtp-local-address', '127.0.0.60').filter((arg) => arg !== '--allow-private-addresses');
    const result = await runCli(args);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^fail {2}default {2}port25 {2}.*private or loopback addresses only/mu);
    expect(lab.stats('mx').connections).toBe(0);
  });

  it('usage errors exit 2 naming the flag', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--public-address', 'nowhere'], /--public-address must be an IP address, got nowhere/],
      [['--dnsbl', 'zen.spamhaus.org,,x'], /--dnsbl takes zone names separated by commas/],
      [['--dnsbl', 'not a zone'], /--dnsbl must be an array of DNS zone names/],
      [['--probe-domain', 'no domain'], /--probe-domain must be a domain name/],
      [['--smtp-port', '0'], /--smtp-port must be a TCP port number/],
      [['--mail-from', 'nobody'], /--mail-from must be an address/],
      [['--smtp-proxy', 'http://u:Secret-Pa55@host'], /--smtp-proxy: a proxy URL must begin with socks5:\/\//],
      [['--smtp-egress-file', join(dir, 'missing.json'), '--public-address', '127.0.0.60'], /cannot be read|--public-address is for the one egress/],
      [['--probe-domian', 'x.com'], /unknown option --probe-domian \(did you mean --probe-domain\?\)/],
    ];
    for (const [flags, message] of cases) {
      const result = await runCli(['doctor', ...flags]);
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toContain('Secret-Pa55');
      expect(result.stdout).toBe('');
    }
    const help = await runCli(['doctor', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: mailverify doctor/);
    expect((await runCli(['--help'])).stdout).toContain('mailverify doctor [options]');
  });
});
