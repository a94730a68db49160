/** The options of createVerifier, and their names, checked by checkOptionNames (an unknown name is a TypeError). */
import type { DnsCacheOptions } from '../dns/lookup.js';
import type { Resolver } from '../dns/resolver.js';
import type { ListsOptions } from '../lists/lists.js';
import type { OptionNames } from '../options/names.js';
import type { SmtpEgress } from '../smtp/egress/egresses.js';
import type { ProviderProfile } from '../smtp/egress/providers.js';
import type { SmtpTransport } from '../smtp/transport.js';
import type { StatusCode } from '../status/catalogue.js';
import { SYNTAX_OPTION_NAMES, type SyntaxOptions } from '../syntax/policy.js';
import type { VerifierObserver } from './observer.js';
import type { OverrideRule } from './overrides.js';
import type { Quality, QualityLevel } from './quality.js';
import type { Checks } from './stages.js';

export interface VerifierOptions {
  /** EHLO name of SMTP probes; default `os.hostname()`. */
  heloName?: string;
  /** Envelope sender of SMTP probes; default `verify@<heloName>`. */
  mailFrom?: string;
  dns?: {
    /** DNS servers (`ip` or `ip:port`) for the default resolver; default: the system's. */
    servers?: string[];
    /** A hard cap on each DNS query, retransmissions and TCP included (default 5000 ms). */
    timeoutMs?: number;
    /** A resolver of the host application's (see `Resolver`; an instance of Node's `dns.promises.Resolver` will do). */
    resolver?: Resolver;
    /** Bounds and lifetimes of the DNS cache. */
    cache?: DnsCacheOptions;
    /** DNS queries in flight at once, over all batches (default 100); more wait their turn. */
    maxQueriesInFlight?: number;
  };
  smtp?: SmtpOptions;
  /** Default false: never use, or connect to, a non-global address (loopback, private, link-local, reserved...). */
  allowPrivateAddresses?: boolean;
  /**
   * Passes over transient results and default timeouts (Standard 1 pass and 5 s, High 3 and 50 s, Extreme 9 and 120 s);
   * default 'Standard'. A custom level (`QualityLevel`) gives its own figures.
   */
  quality?: Quality | QualityLevel;
  /** Passes over transient results, instead of the quality level's (Standard 1, High 3, Extreme 9). */
  passes?: number;
  /** The wait between two passes (default 5 minutes). */
  passDelayMs?: number;
  /** How far to go (default `'smtp'`); `'syntax'` uses no network at all. */
  checks?: Checks;
  /** Extend or replace the built-in lists (disposable, free, role, relay and mail-exchanger lists). */
  lists?: ListsOptions;
  /** Typo suggestions (default true). */
  suggestions?: boolean;
  /** Forms of address to refuse that the RFCs allow (docs/syntax.md#policy-options); default: none. */
  syntax?: SyntaxOptions;
  /**
   * Classification names per status, overriding the default (docs/verification.md#classification); custom names are
   * allowed.
   */
  classifications?: Partial<Record<StatusCode, string>>;
  /**
   * Classifier override rules for every verification of this verifier (docs/verification.md#override-rules): the
   * first rule whose pattern matches an address that parses gives it OverrideMatch and the rule's classification,
   * without DNS or SMTP work. A batch's own rules are tried before these.
   */
  overrides?: readonly OverrideRule[];
  /**
   * Hears what the engine does: DNS queries, exchangers skipped, SMTP sessions and replies, results
   * (docs/verification.md#observing-the-engine). Its errors never reach a verification.
   */
  observer?: VerifierObserver;
  /**
   * Default false: each entry that reached DNS or SMTP carries `evidence`, what decided it (the exchangers, the one
   * asked, the egress, the deciding replies and the rule that read them; docs/verification.md#evidence).
   */
  evidence?: boolean;
}

export interface SmtpOptions {
  /** Default 25. */
  port?: number;
  /** TCP connect, greeting, EHLO and STARTTLS (default by quality: 5 s, 50 s, 120 s). */
  connectTimeoutMs?: number;
  /** Each later command, and the reply to a real recipient's RCPT (default as connectTimeoutMs). */
  commandTimeoutMs?: number;
  /** The reply to the catch-all probe (default: commandTimeoutMs). */
  catchAllTimeoutMs?: number;
  /** A transport of the host application's, used instead of the nodemailer one (see `SmtpTransport`). */
  transport?: SmtpTransport;
  /** Open connections in all (default 50). */
  maxConnections?: number;
  /** Open connections to one exchanger address (default 3). */
  maxConnectionsPerExchanger?: number;
  /** Real recipients of one domain per transaction (default 10). */
  maxRecipientsPerTransaction?: number;
  /** Exchanger addresses tried for one domain before giving up (default 3). */
  maxAttemptsPerDomain?: number;
  /** STARTTLS when offered (default true); certificate validation (default false, as between mail servers, RFC 7435). */
  tls?: { starttls?: boolean; rejectUnauthorized?: boolean };
  /** How long a catch-all verdict is kept per exchanger and domain (default 30 minutes). */
  catchAllCacheTtlMs?: number;
  /**
   * The ways out for probes (docs/egress.md): source addresses of the host's, or SOCKS5 proxies, each with its own EHLO
   * name, sender and connection cap. A connection leaves by the one with the fewest open connections. Default: one
   * implicit egress, `default` (the system's route and the verifier's identity).
   */
  egress?: readonly SmtpEgress[];
  /**
   * Provider profiles (docs/egress.md#provider-profiles), tried before the built-in `PROVIDER_PROFILES`: which
   * exchangers are one provider's, the egresses it may use, and its caps per egress (connections, recipients per
   * minute and per day).
   */
  providers?: readonly ProviderProfile[];
  /** How long work waits for a cooling egress to take it again before it is deferred to the next pass (default 5 minutes). */
  maxCoolingWaitMs?: number;
}


export const VERIFIER_OPTION_NAMES: OptionNames = {
  heloName: true,
  mailFrom: true,
  dns: {
    servers: true,
    timeoutMs: true,
    resolver: true,
    cache: { maxEntries: true, maxTtlMs: true, negativeTtlMs: true },
    maxQueriesInFlight: true,
  },
  smtp: {
    port: true,
    connectTimeoutMs: true,
    commandTimeoutMs: true,
    catchAllTimeoutMs: true,
    transport: true,
    maxConnections: true,
    maxConnectionsPerExchanger: true,
    maxRecipientsPerTransaction: true,
    maxAttemptsPerDomain: true,
    tls: { starttls: true, rejectUnauthorized: true },
    catchAllCacheTtlMs: true,
    egress: true,
    providers: true,
    maxCoolingWaitMs: true,
  },
  allowPrivateAddresses: true,
  evidence: true,
  quality: true,
  passes: true,
  passDelayMs: true,
  checks: true,
  lists: {
    disposableDomains: true,
    freeProviderDomains: true,
    roleLocalParts: true,
    relayDomains: true,
    disposableMailExchangers: true,
    parkedMailExchangers: true,
    honeypotMailExchangers: true,
  },
  suggestions: true,
  classifications: true,
  overrides: true,
  observer: true,
  syntax: SYNTAX_OPTION_NAMES,
};
