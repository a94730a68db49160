/** The option names of createVerifier, checked by checkOptionNames (an unknown name is a TypeError). */
import type { OptionNames } from '../options/names.js';
import { SYNTAX_OPTION_NAMES } from '../syntax/policy.js';

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
  },
  allowPrivateAddresses: true,
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
