/**
 * The doctor (docs/doctor.md): what receiving exchangers will think of each egress before any address is probed
 * through it. For each egress: its proxy, the public address it is seen from, that address's reverse DNS, the HELO
 * name, the sender domain's SPF, the DNS blocklists, and a session to an exchanger on port 25 (greeting, EHLO, QUIT).
 */
import { DnsLookup } from '../dns/lookup.js';
import { createDefaultResolver, type DefaultResolver } from '../dns/resolver.js';
import { egressesOf } from '../engine/verifier.js';
import type { SmtpOptions, VerifierOptions } from '../engine/options.js';
import { checkOptionNames, type OptionNames } from '../options/names.js';
import { describeValue, type Egress } from '../smtp/egress/egresses.js';
import { createNodemailerTransport } from '../smtp/nodemailer-transport.js';
import { DEFAULT_DNSBL_ZONES, checkDnsbl } from './dnsbl.js';
import { isDomainName, type DoctorResolver } from './dns.js';
import { checkHelo, checkPtr, publicAddressOf } from './naming.js';
import { probe, probeTargets, type ProbeSettings, type ProbeTargets } from './port25.js';
import { NEEDS_PUBLIC_ADDRESS, type DiagnosisCheck, type EgressDiagnosis, type Finding } from './rows.js';
import { checkSpf } from './spf.js';

export type { DiagnosisCheck, DiagnosisResult, EgressDiagnosis } from './rows.js';
export { DEFAULT_DNSBL_ZONES } from './dnsbl.js';

/** The options of `diagnoseEgress`: those of `createVerifier` that say how probes leave, plus the doctor's own. */
export interface DiagnoseEgressOptions {
  /** EHLO name (default `os.hostname()`), as `createVerifier`'s; an egress may have its own. */
  heloName?: VerifierOptions['heloName'];
  /** Envelope sender (default `verify@<heloName>`), whose domain's SPF is checked; an egress may have its own. */
  mailFrom?: VerifierOptions['mailFrom'];
  /**
   * DNS servers and the cap on each query, as `createVerifier`'s; a `resolver` of the host application's must also
   * answer PTR and TXT questions (`resolvePtr`, `resolveTxt`: an instance of `node:dns`'s `Resolver` does).
   */
  dns?: { servers?: string[]; timeoutMs?: number; resolver?: DoctorResolver };
  /** The SMTP port (default 25), the egresses (default the one implicit egress `default`), the timeouts, a transport. */
  smtp?: Pick<SmtpOptions, 'port' | 'egress' | 'connectTimeoutMs' | 'commandTimeoutMs' | 'transport'>;
  /** Default false: exchangers, and public addresses, on private or loopback addresses are not used. */
  allowPrivateAddresses?: boolean;
  /** DNSBL zones to look the public address up on (default `zen.spamhaus.org`, `b.barracudacentral.org`, `bl.spamcop.net`). */
  dnsbl?: readonly string[];
  /** The domain whose exchangers the port 25 session goes to (default `gmail.com`). */
  probeDomain?: string;
}

const DIAGNOSE_OPTION_NAMES: OptionNames = {
  heloName: true,
  mailFrom: true,
  dns: { servers: true, timeoutMs: true, resolver: true },
  smtp: { port: true, egress: true, connectTimeoutMs: true, commandTimeoutMs: true, transport: true },
  allowPrivateAddresses: true,
  dnsbl: true,
  probeDomain: true,
};

const CALLER = 'diagnoseEgress';
const DEFAULT_PROBE_DOMAIN = 'gmail.com';
/** The Standard quality level's timeout: an exchanger that takes longer to greet is as good as silent. */
const DEFAULT_TIMEOUT_MS = 5000;

/** The options checked and ready: what the diagnosis runs with. */
export interface DiagnosisPlan {
  readonly egresses: readonly Egress[];
  readonly resolver: DoctorResolver;
  /** The built-in resolver, closed when the diagnosis ends. */
  readonly ownResolver?: DefaultResolver;
  readonly settings: ProbeSettings;
  readonly allowPrivateAddresses: boolean;
  readonly zones: readonly string[];
}

/**
 * Checks each egress (`smtp.egress`, or the implicit `default`) and resolves with its rows, in the order of
 * `DIAGNOSIS_CHECKS` (`proxy` only for an egress with a proxy), egress after egress. Never rejects for what it finds;
 * rejects with a TypeError naming the option for a bad option.
 */
export async function diagnoseEgress(options: DiagnoseEgressOptions = {}): Promise<EgressDiagnosis[]> {
  return runDiagnosis(planDiagnosis(options));
}

function optionError(name: string, expected: string, value: unknown): TypeError {
  return new TypeError(`${CALLER}: option ${name} must be ${expected}, got ${describeValue(value)}`);
}

/** Checks the options (a TypeError naming the bad one) and makes the resolver. */
export function planDiagnosis(options: DiagnoseEgressOptions): DiagnosisPlan {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw optionError('(options)', 'an object', options);
  checkOptionNames(options, DIAGNOSE_OPTION_NAMES, CALLER);
  for (const name of ['dns', 'smtp'] as const) {
    const value = options[name];
    if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) throw optionError(name, 'an object', value);
  }
  const allow = options.allowPrivateAddresses;
  if (allow !== undefined && typeof allow !== 'boolean') throw optionError('allowPrivateAddresses', 'true or false', allow);
  const smtp = options.smtp ?? {};
  if (smtp.port !== undefined && !(Number.isInteger(smtp.port) && smtp.port > 0 && smtp.port < 65536)) throw optionError('smtp.port', 'a TCP port number', smtp.port);
  for (const name of ['connectTimeoutMs', 'commandTimeoutMs'] as const) {
    const value = smtp[name];
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) throw optionError(`smtp.${name}`, 'a positive number', value);
  }
  if (smtp.transport !== undefined && typeof smtp.transport?.open !== 'function') throw optionError('smtp.transport', 'an object with an open(options) method', smtp.transport);
  const egresses = egressesOf(options, CALLER);
  const zones = options.dnsbl ?? DEFAULT_DNSBL_ZONES;
  if (!Array.isArray(zones) || !zones.every((zone) => typeof zone === 'string' && isDomainName(zone))) {
    throw optionError('dnsbl', 'an array of DNS zone names (zen.spamhaus.org)', Array.isArray(zones) ? zones.find((zone) => typeof zone !== 'string' || !isDomainName(zone)) : zones);
  }
  const probeDomain = options.probeDomain ?? DEFAULT_PROBE_DOMAIN;
  if (typeof probeDomain !== 'string' || !isDomainName(probeDomain)) throw optionError('probeDomain', 'a domain name', probeDomain);
  const dns = options.dns ?? {};
  if (dns.timeoutMs !== undefined && !(Number.isFinite(dns.timeoutMs) && dns.timeoutMs > 0)) throw optionError('dns.timeoutMs', 'a positive number', dns.timeoutMs);
  if (dns.servers !== undefined && !(Array.isArray(dns.servers) && dns.servers.every((server) => typeof server === 'string'))) {
    throw optionError('dns.servers', 'an array of strings', dns.servers);
  }
  const settings: ProbeSettings = {
    transport: smtp.transport ?? createNodemailerTransport(),
    port: smtp.port ?? 25,
    connectTimeoutMs: smtp.connectTimeoutMs ?? DEFAULT_TIMEOUT_MS,
    commandTimeoutMs: smtp.commandTimeoutMs ?? smtp.connectTimeoutMs ?? DEFAULT_TIMEOUT_MS,
    probeDomain: probeDomain.toLowerCase().replace(/\.$/u, ''),
  };
  const common = { egresses, settings, allowPrivateAddresses: allow === true, zones: [...zones] };
  if (dns.resolver !== undefined) {
    const methods = ['resolveMx', 'resolve4', 'resolve6', 'resolvePtr', 'resolveTxt'];
    if (!methods.every((method) => typeof (dns.resolver as unknown as Record<string, unknown>)[method] === 'function')) {
      throw optionError('dns.resolver', `an object with ${methods.join(', ')} methods (as node:dns's Resolver has)`, dns.resolver);
    }
    return { ...common, resolver: dns.resolver };
  }
  let own: DefaultResolver;
  try {
    own = createDefaultResolver({ servers: dns.servers, timeoutMs: dns.timeoutMs });
  } catch (error) {
    throw new TypeError(`${CALLER}: option dns.servers: ${(error as Error).message}`);
  }
  return { ...common, resolver: own, ownResolver: own };
}

/** Runs a plan: every egress at once, the rows grouped by egress in the given order. */
export async function runDiagnosis(plan: DiagnosisPlan): Promise<EgressDiagnosis[]> {
  try {
    const targets = await probeTargets(new DnsLookup(plan.resolver), plan.settings.probeDomain, plan.allowPrivateAddresses);
    const rows = await Promise.all(plan.egresses.map((egress) => diagnoseOne(egress, targets, plan)));
    return rows.flat();
  } finally {
    await plan.ownResolver?.close();
  }
}

async function diagnoseOne(egress: Egress, targets: ProbeTargets, plan: DiagnosisPlan): Promise<EgressDiagnosis[]> {
  // The session first: its EHLO reply may tell the public address the other checks need.
  const probed = await probe(egress, targets, plan.settings);
  const publicAddress = publicAddressOf(egress, probed.seen, plan.allowPrivateAddresses);
  const findings = new Map<DiagnosisCheck, Finding>();
  if (probed.proxy !== undefined) findings.set('proxy', probed.proxy);
  findings.set('public-address', publicAddress.finding);
  const address = publicAddress.address;
  if (address === undefined) {
    for (const check of ['ptr', 'helo', 'spf', 'dnsbl'] as const) findings.set(check, NEEDS_PUBLIC_ADDRESS);
  } else {
    const { resolver } = plan;
    const [naming, spf, dnsbl] = await Promise.all([
      checkPtr(resolver, address, egress.heloName).then(async (ptr) => ({ ptr, helo: await checkHelo(resolver, egress.heloName, address, ptr.names) })),
      checkSpf(resolver, address, egress.mailFrom, egress.heloName),
      checkDnsbl(resolver, address, plan.zones),
    ]);
    findings.set('ptr', naming.ptr.finding).set('helo', naming.helo).set('spf', spf).set('dnsbl', dnsbl);
  }
  findings.set('port25', probed.port25);
  return [...findings].map(([check, finding]) => ({ egress: egress.id, check, result: finding.result, detail: finding.detail }));
}
