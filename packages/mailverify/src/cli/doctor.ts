/**
 * `mailverify doctor`: the self-test of each egress (docs/doctor.md), `diagnoseEgress` on the command line. One line
 * per egress and check, or `--json`; exit 0 without a failure, 1 with one, 2 for a usage error.
 */
import { isIP } from 'node:net';
import { DEFAULT_DNSBL_ZONES, planDiagnosis, runDiagnosis, type DiagnoseEgressOptions, type EgressDiagnosis } from '../doctor/diagnose.js';
import { ENGINE_FLAGS, UsageError, engineOptionsOf, usage, type EngineFlagValues } from './engine-flags.js';
import { EGRESS_FLAGS } from './egress-options.js';
import { parseFlags } from './flags.js';

export const DOCTOR_USAGE = `Usage: mailverify doctor [options]

Checks each egress (the ways out of SMTP probes) as a receiving mail server will judge it, and prints
one line per egress and check: ok|warn|fail  EGRESS  CHECK  what was seen[ — what to do].
  proxy           the SOCKS5 handshake and credentials (an egress with a proxy)
  public-address  the address exchangers see: --public-address, else the one an exchanger's EHLO reply
                  names, else the egress's local address
  ptr             a PTR record whose name resolves back to the address
  helo            the HELO name resolves to the address (and is the PTR name)
  spf             the SPF result of the sender's domain for the address
  dnsbl           the address on the DNS blocklists
  port25          a session to an exchanger of --probe-domain: greeting, EHLO, QUIT (never MAIL)
See docs/doctor.md for what each failure means and how to fix it.

Options:
  --helo-name NAME        EHLO name (default: this host's name)
  --mail-from ADDRESS     envelope sender, whose domain's SPF is checked (default verify@<helo name>)
  --smtp-port N           SMTP port (default 25)
  --smtp-proxy URL        the egress "default" through this SOCKS5 proxy: socks5://[user[:password]@]host[:port]
  --smtp-proxy-file FILE  the same, the URL read from FILE (its password is then not in the process list)
  --smtp-local-address ADDRESS
                          the egress "default" from this source address
  --smtp-egress-file FILE several egresses: a JSON array of {"id", "localAddress" or "proxy", "heloName",
                          "mailFrom", "maxConnections", "publicAddress"} (docs/egress.md)
  --public-address ADDRESS
                          the address exchangers see the egress come from (behind NAT or a proxy); with
                          --smtp-egress-file, give each egress its "publicAddress" instead
  --probe-domain DOMAIN   the domain whose exchangers the port25 check connects to (default gmail.com)
  --dnsbl ZONES           DNSBL zones, comma-separated (default ${DEFAULT_DNSBL_ZONES.join(',')})
  --dns-server IP[:PORT]  DNS server to ask instead of the system's (repeatable)
  --dns-timeout MS        the cap on each DNS query (default 5000)
  --allow-private-addresses
                          let exchangers and public addresses on private or loopback addresses be used
  --json                  print a JSON array of {"egress", "check", "result", "detail"}
  -h, --help              this text

Exit codes: 0 no failure, 1 a failure, 2 a usage error.`;

/** `check`'s DNS and SMTP identity flags, and the egress flags. */
const DOCTOR_FLAGS = {
  'dns-server': ENGINE_FLAGS['dns-server'],
  'dns-timeout': ENGINE_FLAGS['dns-timeout'],
  'helo-name': ENGINE_FLAGS['helo-name'],
  'mail-from': ENGINE_FLAGS['mail-from'],
  'smtp-port': ENGINE_FLAGS['smtp-port'],
  'allow-private-addresses': ENGINE_FLAGS['allow-private-addresses'],
  ...EGRESS_FLAGS,
  'public-address': { type: 'string' },
  'probe-domain': { type: 'string' },
  dnsbl: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

interface DoctorFlagValues extends EngineFlagValues {
  'public-address'?: string;
  'probe-domain'?: string;
  dnsbl?: string;
  json?: boolean;
  help?: boolean;
}

/** The options of `diagnoseEgress` from the flags, or 'help'. */
export function doctorOptionsOf(argv: string[]): { options: DiagnoseEgressOptions; json: boolean } | 'help' {
  const { values, positionals } = parseFlags({ args: argv, allowPositionals: true, options: DOCTOR_FLAGS });
  const flags = values as DoctorFlagValues;
  if (flags.help === true) return 'help';
  if (positionals.length > 0) throw new UsageError(`doctor takes no file, got ${positionals[0]}`);
  const engine = engineOptionsOf(flags);
  let egress = engine.smtp?.egress;
  const publicAddress = flags['public-address'];
  if (publicAddress !== undefined) {
    if (isIP(publicAddress) === 0) throw new UsageError(`--public-address must be an IP address, got ${publicAddress}`);
    if (flags['smtp-egress-file'] !== undefined) {
      throw new UsageError('--public-address is for the one egress of --smtp-proxy, --smtp-local-address or none; with --smtp-egress-file give each egress its "publicAddress"');
    }
    egress = [{ ...(egress?.[0] ?? { id: 'default' }), publicAddress }];
  }
  return {
    json: flags.json === true,
    options: {
      ...(engine.heloName !== undefined && { heloName: engine.heloName }),
      ...(engine.mailFrom !== undefined && { mailFrom: engine.mailFrom }),
      dns: { ...(engine.dns?.servers !== undefined && { servers: engine.dns.servers }), ...(engine.dns?.timeoutMs !== undefined && { timeoutMs: engine.dns.timeoutMs }) },
      smtp: { ...(engine.smtp?.port !== undefined && { port: engine.smtp.port }), ...(egress !== undefined && { egress }) },
      allowPrivateAddresses: engine.allowPrivateAddresses === true,
      ...(flags['probe-domain'] !== undefined && { probeDomain: flags['probe-domain'] }),
      ...(flags.dnsbl !== undefined && { dnsbl: zonesOf(flags.dnsbl) }),
    },
  };
}

function zonesOf(text: string): string[] {
  const zones = text.split(',').map((zone) => zone.trim());
  if (zones.some((zone) => zone === '')) throw new UsageError(`--dnsbl takes zone names separated by commas, got ${JSON.stringify(text)}`);
  return zones;
}

const OPTION_FLAGS: Readonly<Record<string, string>> = { heloName: '--helo-name', mailFrom: '--mail-from', probeDomain: '--probe-domain', dnsbl: '--dnsbl' };

/** One line of the report: `ok|warn|fail  EGRESS  CHECK  detail`. */
export function reportLine(row: EgressDiagnosis): string {
  return `${row.result}  ${row.egress}  ${row.check}  ${row.detail}`;
}

export async function doctor(argv: string[]): Promise<number> {
  const parsed = doctorOptionsOf(argv);
  if (parsed === 'help') {
    process.stdout.write(DOCTOR_USAGE + '\n');
    return 0;
  }
  // The options' TypeErrors name the option: the user's to fix, told by its flag.
  const plan = usage(() => {
    try {
      return planDiagnosis(parsed.options);
    } catch (error) {
      const option = /^diagnoseEgress: option (heloName|mailFrom|probeDomain|dnsbl)\b/u.exec((error as Error).message);
      if (option === null) throw error;
      throw new Error(`${OPTION_FLAGS[option[1]!]}${(error as Error).message.slice(option[0].length)}`);
    }
  });
  const rows = await runDiagnosis(plan);
  process.stdout.write(parsed.json ? `${JSON.stringify(rows, null, 2)}\n` : rows.map((row) => `${reportLine(row)}\n`).join(''));
  return rows.some((row) => row.result === 'fail') ? 1 : 0;
}
