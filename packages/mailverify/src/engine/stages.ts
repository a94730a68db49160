/**
 * The stages of the pipeline after syntax (docs/verification.md#the-pipeline), for one parsed address. The offline
 * stages (2 to 5) run at once and fill the flags; the network stages (6, 7, 8) are one pass, which a batch may run
 * again for a transient result.
 *
 * 2. domain-literal policy; 3. public top-level label; 4. override rules; 5. disposable domain and relay-service
 * lists; 6. DNS; 7. mail-exchanger host lists; 8. SMTP. (1, syntax, comes before; deduplication belongs to the batch.)
 */
import { SharedInterest, WithdrawnError } from '../dns/interest.js';
import type { DnsLookup } from '../dns/lookup.js';
import { cachedMailDomain, resolveMailDomain, type MailDomain, type MailExchanger } from '../domain/mail-domain.js';
import { hasPublicTopLevel } from '../domain/top-level.js';
import type { Lists } from '../lists/lists.js';
import { classifyAddress } from '../net/ip-ranges.js';
import { literalIpAddress } from '../net/literal-address.js';
import type { SmtpEvidence } from '../smtp/evidence.js';
import type { ProbeOwner, SmtpProber } from '../smtp/prober.js';
import type { Observe } from './observer.js';
import type { StatusCode } from '../status/catalogue.js';
import type { ParsedAddress } from '../syntax/types.js';
import { deduplicationKey } from './dedupe.js';
import { evidenceOf, type Evidence } from './evidence.js';
import type { OverrideMatcher } from './overrides.js';

/** The address as override rules see it: as Safe deduplication compares it. */
function safeKey(parsed: ParsedAddress): string {
  return deduplicationKey(parsed.emailAddress, parsed, 'Safe');
}

export type Checks = 'syntax' | 'dns' | 'smtp';

export interface StageContext {
  readonly checks: Checks;
  readonly lists: Lists;
  readonly dns: DnsLookup;
  /**
   * Domains being resolved now: the addresses of one domain, in every batch, share its resolution (answers are cached
   * by DnsLookup); it is withdrawn once every batch that waits for it is.
   */
  readonly resolving: Map<string, Resolution>;
  readonly prober: SmtpProber | null;
  readonly allowPrivateAddresses: boolean;
  /** The verifier's observer, guarded. */
  readonly observe: Observe;
  /** Entries carry what the DNS and SMTP stages saw (a batch may ask for it too). */
  readonly evidence: boolean;
}

/** A domain's resolution under way, and the interest of the batches waiting for it. */
export interface Resolution {
  readonly mailDomain: Promise<MailDomain>;
  readonly interest: SharedInterest;
}

/** The flags, known before any network work (step 7 may still mark a disposable exchanger). */
export interface Flags {
  isDisposableEmailAddress: boolean;
  isRoleAccount: boolean;
  isFreeEmailAddress: boolean;
}

/**
 * What the offline stages decided: a status (with an override rule's classification), or the network stages to run
 * (`probeAt`: an address literal's IP).
 */
export type OfflineOutcome =
  | { readonly status: StatusCode; readonly syntaxFailureIndex?: number; readonly classification?: string }
  | { readonly status: null; readonly probeAt: string | null };

/**
 * Steps 2 to 5: fills `flags`, and decides a status or hands the address to the network stages. `overrideOf`
 * (the batch's override rules) decides after the literal policy and the top-level check, before the lists.
 */
export function offlineStages(
  parsed: ParsedAddress,
  domainStart: number,
  context: StageContext,
  flags: Flags,
  overrideOf: OverrideMatcher | null = null,
): OfflineOutcome {
  const domain = parsed.asciiDomainPart;
  const { lists } = context;
  flags.isRoleAccount = lists.isRoleAccount(parsed.localPart);
  if (domain.charCodeAt(0) === 0x5b /* [ */) {
    flags.isFreeEmailAddress = false;
    flags.isDisposableEmailAddress = false;
    // Step 2: a literal must be a global address unless the caller allows others; it skips steps 3 and 5 to 7.
    const address = literalIpAddress(domain);
    if (address === null || (classifyAddress(address) !== 'global' && !context.allowPrivateAddresses)) {
      return { status: 'UnacceptableDomainLiteral', syntaxFailureIndex: domainStart };
    }
    const classification = overrideOf?.(safeKey(parsed)) ?? null;
    if (classification !== null) return { status: 'OverrideMatch', classification };
    // Step 8: probed at that address.
    return context.checks === 'smtp' && context.prober !== null ? { status: null, probeAt: address } : { status: 'Success' };
  }
  const disposable = lists.isDisposableDomain(domain);
  const relay = lists.isRelayDomain(domain);
  flags.isFreeEmailAddress = lists.isFreeProvider(domain);
  flags.isDisposableEmailAddress = disposable || relay;
  // Step 3: no DNS query for a name that cannot exist.
  if (!hasPublicTopLevel(domain)) return { status: 'DomainDoesNotExist' };
  // Step 4: the user's override rules; no list, DNS or SMTP work for an address they decide.
  const classification = overrideOf?.(safeKey(parsed)) ?? null;
  if (classification !== null) return { status: 'OverrideMatch', classification };
  // Step 5: disposable domains, then relay services.
  if (disposable) return { status: 'DomainIsWellKnownDea' };
  if (relay) return { status: 'MailboxIsDea' };
  if (context.checks === 'syntax') return { status: 'Success' };
  return { status: null, probeAt: null };
}

/**
 * One pass of the network stages: the status, whether the domain has MX records, and what the DNS and SMTP stages
 * saw when evidence was asked for; a null status if withdrawn.
 */
export interface NetworkOutcome {
  readonly status: StatusCode | null;
  readonly hasMx: boolean;
  readonly evidence?: Evidence;
}

export async function networkStages(
  parsed: ParsedAddress,
  probeAt: string | null,
  context: StageContext,
  flags: Flags,
  owner: ProbeOwner,
  evidence = false,
): Promise<NetworkOutcome> {
  const domain = parsed.asciiDomainPart;
  const smtp: SmtpEvidence | undefined = evidence ? {} : undefined;
  if (probeAt !== null) {
    const status = await probe(parsed, [{ host: '', priority: 0, addresses: [probeAt] }], context, owner, smtp);
    return { status, hasMx: false, ...(smtp !== undefined && { evidence: evidenceOf(undefined, smtp) }) };
  }

  // Step 6: DNS; from the cache at once when every answer is there (the common case on a long list).
  if (owner.withdrawn) return WITHDRAWN;
  const cached = cachedMailDomain(context.dns, domain, {
    allowPrivateAddresses: context.allowPrivateAddresses,
    onSkipped: context.observe.exchangerSkipped,
  });
  const mailDomain = cached ?? (await resolveShared(domain, context, owner));
  if (mailDomain === null) return WITHDRAWN;
  // The exchangers' host names in preference order; none for a null MX (RFC 7505); unknown when DNS failed.
  const mx = !evidence ? undefined : mailDomain.status === null ? mailDomain.exchangers.map((exchanger) => exchanger.host) : mailDomain.status === 'DomainHasNullMx' ? [] : undefined;
  const seen = (status: StatusCode | null): NetworkOutcome => ({ status, hasMx: mailDomain.hasMx, ...(evidence && { evidence: evidenceOf(mx, smtp) }) });
  if (mailDomain.status !== null) return seen(mailDomain.status);

  // Step 7: what the mail exchangers' host names tell.
  for (const exchanger of mailDomain.exchangers) {
    const category = context.lists.mailExchangerCategory(exchanger.host);
    if (category === 'disposable') {
      flags.isDisposableEmailAddress = true;
      return seen('MailExchangerIsWellKnownDea');
    }
    if (category === 'parked') return seen('MailExchangerIsParked');
    if (category === 'honeypot') return seen('MailExchangerIsHoneypot');
  }
  // Step 8: SMTP.
  if (context.checks !== 'smtp' || context.prober === null) return seen('Success');
  return seen(await probe(parsed, mailDomain.exchangers, context, owner, smtp));
}

const WITHDRAWN: NetworkOutcome = { status: null, hasMx: false };

/**
 * The domain's resolution, shared with every address of it under way; null once `owner` is withdrawn. An owner still
 * interested in a resolution that the others withdrew starts a new one.
 */
async function resolveShared(domain: string, context: StageContext, owner: ProbeOwner): Promise<MailDomain | null> {
  for (;;) {
    if (owner.withdrawn) return null;
    let resolution = context.resolving.get(domain);
    if (resolution === undefined) {
      const interest = new SharedInterest(owner);
      const mailDomain = resolveMailDomain(context.dns, domain, {
        allowPrivateAddresses: context.allowPrivateAddresses,
        onSkipped: context.observe.exchangerSkipped,
        interest,
      });
      const started: Resolution = { mailDomain, interest };
      resolution = started;
      context.resolving.set(domain, started);
      const done = () => {
        if (context.resolving.get(domain) === started) context.resolving.delete(domain);
      };
      mailDomain.then(done, done);
    } else {
      resolution.interest.join(owner);
    }
    try {
      return await resolution.mailDomain;
    } catch (error) {
      if (!(error instanceof WithdrawnError)) throw error;
    }
  }
}

/** RCPT TO takes the local part as written, without CFWS, and the ASCII domain (RFC 5321 §4.1.2). */
function probe(
  parsed: ParsedAddress,
  exchangers: readonly MailExchanger[],
  context: StageContext,
  owner: ProbeOwner,
  evidence: SmtpEvidence | undefined,
): Promise<StatusCode | null> {
  return context.prober!.probe({
    domain: parsed.asciiDomainPart,
    exchangers,
    recipient: { address: `${parsed.localPart}@${parsed.asciiDomainPart}`, international: parsed.hasInternationalMailboxName },
    owner,
    ...(evidence !== undefined && { evidence }),
  });
}
