/**
 * The `port25` and `proxy` checks: a session through the egress to an exchanger of the probe domain, by the engine's
 * own transport (the same connection opening as probes: source address or SOCKS5 proxy). Greeting, EHLO, QUIT: never
 * MAIL, so that nothing is ever sent. The EHLO reply may name the address the exchanger saw, in brackets.
 */
import { isIP } from 'node:net';
import type { DnsLookup } from '../dns/lookup.js';
import { resolveMailDomain, type ExchangerSkippedEvent } from '../domain/mail-domain.js';
import { routeOf, type Egress } from '../smtp/egress/egresses.js';
import type { SmtpReply } from '../smtp/reply.js';
import { SmtpTransportError, type SmtpTransport } from '../smtp/transport.js';
import { fail, ok, oneLine, warn, type Finding } from './rows.js';

/** An exchanger address to try, with its host name. */
export interface ProbeTarget {
  readonly host: string;
  readonly address: string;
}

/** The exchangers of the probe domain, or why there are none to connect to. */
export type ProbeTargets = { readonly ok: true; readonly targets: readonly ProbeTarget[] } | { readonly ok: false; readonly finding: Finding };

/** Exchangers tried per egress: a second one tells a closed port from one exchanger that is down. */
const TARGETS_TRIED = 2;

/** What to do when port 25 cannot be reached: from here, or from the proxy. */
function portClosedFix(egress: Egress): string {
  return egress.proxy === undefined
    ? 'outbound port 25 is closed here (most clouds and ISPs close it): use --smtp-proxy to a host of your own that can reach port 25, or ask the provider to open it'
    : 'the proxy cannot reach port 25 (most commercial proxies close it): run a SOCKS5 proxy on a host of your own that can';
}

/** The exchangers of `domain` (RFC 5321 §5.1: MX records, else the implicit MX; RFC 7505 null MX), the engine's way. */
export async function probeTargets(dns: DnsLookup, domain: string, allowPrivateAddresses: boolean): Promise<ProbeTargets> {
  const skipped: ExchangerSkippedEvent[] = [];
  const mailDomain = await resolveMailDomain(dns, domain, { allowPrivateAddresses, onSkipped: (event) => skipped.push(event) });
  if (mailDomain.status === null) {
    return { ok: true, targets: mailDomain.exchangers.slice(0, TARGETS_TRIED).map(({ host, addresses }) => ({ host, address: addresses[0]! })) };
  }
  const fix = 'give a domain whose exchangers answer (--probe-domain, default gmail.com), or check the DNS server (--dns-server)';
  switch (mailDomain.status) {
    case 'DomainHasNullMx':
      return { ok: false, finding: fail(`${domain} accepts no mail (null MX, RFC 7505)`, fix) };
    case 'DomainDoesNotExist':
      return { ok: false, finding: fail(`${domain} does not exist (NXDOMAIN)`, fix) };
    case 'DnsQueryTimeout':
    case 'DnsConnectionFailure':
      return { ok: false, finding: fail(`the exchangers of ${domain} could not be looked up (${mailDomain.status})`, 'check the DNS server (--dns-server) and that this host can reach it') };
    default:
      if (skipped.length > 0) {
        const seen = skipped.map((event) => `${event.exchanger} ${event.addresses.join(' ')}`).join(', ');
        return {
          ok: false,
          finding: fail(
            `the exchangers of ${domain} are on private or loopback addresses only (${seen})`,
            'such addresses are only used with --allow-private-addresses (option allowPrivateAddresses); or give another --probe-domain',
          ),
        };
      }
      return { ok: false, finding: fail(`${domain} has no usable mail exchanger (misconfigured DNS)`, fix) };
  }
}

export interface ProbeSettings {
  readonly transport: SmtpTransport;
  readonly port: number;
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
  readonly probeDomain: string;
}

/** What the session told: the `port25` row, the `proxy` row (an egress with a proxy), the address the exchanger saw. */
export interface Probe {
  readonly port25: Finding;
  readonly proxy?: Finding;
  /** The address in brackets in the EHLO reply, and who named it. */
  readonly seen?: { readonly address: string; readonly exchanger: string };
}

/** One session per egress, to the first exchanger that answers; the first failure is the one reported. */
export async function probe(egress: Egress, targets: ProbeTargets, settings: ProbeSettings): Promise<Probe> {
  const proxyShown = egress.proxy?.shown;
  if (!targets.ok) {
    const proxy = proxyShown === undefined ? undefined : warn(`not checked: there is no exchanger of ${settings.probeDomain} to connect to through ${proxyShown}`, 'fix the port25 row first');
    return { port25: targets.finding, ...(proxy && { proxy }) };
  }
  let first: Probe | undefined;
  for (const target of targets.targets) {
    const outcome = await session(egress, target, settings);
    // A proxy that refuses us refuses every exchanger: no use trying the next.
    if (outcome.proxy?.result === 'fail') return outcome;
    if (outcome.port25.result === 'ok') return outcome;
    first ??= outcome;
  }
  return first!;
}

async function session(egress: Egress, target: ProbeTarget, settings: ProbeSettings): Promise<Probe> {
  const where = `${target.host} (${target.address}) port ${settings.port}`;
  const proxyOk = egress.proxy === undefined ? undefined : ok(`${egress.proxy.shown} completed the SOCKS5 handshake and accepted the credentials`);
  let opened;
  try {
    opened = await settings.transport.open({
      host: target.address,
      port: settings.port,
      servername: target.host,
      heloName: egress.heloName,
      egress: routeOf(egress),
      tls: { starttls: false, rejectUnauthorized: false },
      connectTimeoutMs: settings.connectTimeoutMs,
      commandTimeoutMs: settings.commandTimeoutMs,
    });
  } catch (error) {
    return failedOpen(error, egress, where, proxyOk);
  }
  const greeting = opened.greeting;
  const hello = opened.hello;
  await opened.quit();
  const address = hello === undefined ? undefined : bracketAddress(hello);
  const seenAs = address === undefined ? '' : ` (naming ${address})`;
  const port25 = ok(`${where}: greeting ${greeting.code}${hello === undefined ? '' : `, EHLO ${egress.heloName} ${hello.code}${seenAs}`}, QUIT`);
  return { port25, ...(proxyOk && { proxy: proxyOk }), ...(address !== undefined && { seen: { address, exchanger: target.host } }) };
}

function failedOpen(error: unknown, egress: Egress, where: string, proxyOk: Finding | undefined): Probe {
  if (!(error instanceof SmtpTransportError)) {
    return { port25: fail(`${where}: ${oneLine(String((error as Error | null)?.message ?? error))}`, portClosedFix(egress)), ...(proxyOk && { proxy: proxyOk }) };
  }
  // The transport says when a failure is the egress's own (proxy refused, silent, or a source address not bound).
  if (error.egress === egress.id) {
    if (egress.proxy !== undefined) {
      const proxy = fail(error.message, `check the proxy's host, port, user and password (the password is best kept in --smtp-proxy-file)`);
      return { proxy, port25: warn(`not checked: the session could not go through the proxy`, 'fix the proxy row first') };
    }
    return { port25: fail(error.message, `give a localAddress that is an address of this host's (ip addr), or leave it out`) };
  }
  const reply = error.reply === undefined ? '' : `: ${replyText(error.reply)}`;
  let port25: Finding;
  switch (error.code) {
    case 'ECONNECTION':
      port25 = fail(`${where} refused or dropped the connection (${oneLine(error.message)})`, portClosedFix(egress));
      break;
    case 'ETIMEDOUT':
      port25 = fail(`${where} stayed silent: ${oneLine(error.message)}`, portClosedFix(egress));
      break;
    case 'EREPLY':
      port25 = fail(
        `${where} refused the session during ${error.phase}${reply}`,
        'the exchanger turns this address away: read its reply (a blocklist, a missing PTR record) and see the other rows',
      );
      break;
    default:
      port25 = fail(`${where}: ${oneLine(error.message)}${reply}`, 'something between this host and port 25 is not a mail exchanger (an intercepting proxy?): try another --probe-domain or egress');
  }
  return { port25, ...(proxyOk && { proxy: proxyOk }) };
}

function replyText(reply: SmtpReply): string {
  return oneLine(`${reply.code} ${reply.lines.join(' ')}`);
}

/** The address in brackets on the first line of an EHLO reply (`250-mx.google.com at your service, [203.0.113.5]`). */
export function bracketAddress(hello: SmtpReply): string | undefined {
  const first = hello.lines[0] ?? '';
  for (const match of first.matchAll(/\[(?:IPv6:)?([0-9A-Fa-f:.]+)\]/gu)) {
    if (isIP(match[1]!) !== 0) return match[1]!;
  }
  return undefined;
}
