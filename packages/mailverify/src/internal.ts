/**
 * mailverify/internal: the engine's parts that the server package (mailverify-server) builds on, beyond the public
 * surface of index.ts. Not a stable interface: it changes with the server, in any release, without notice.
 */
export { EgressOptionError, egressFile, egressList, localAddressEgress, providerList, providersFile, proxyEgress, proxyUrlFromFile } from './cli/egress-options.js';
export { REFUSABLE, UsageError, asksForVersion, commandFailed } from './cli/engine-flags.js';
export { parseFlags } from './cli/flags.js';
export { createDefaultResolver } from './dns/resolver.js';
export type { Resolver } from './dns/resolver.js';
export { parseServers } from './dns/stub-resolver.js';
export { SETTLED } from './engine/batch.js';
export type { SettledInput } from './engine/batch.js';
export { escapeFormula } from './engine/csv-formulas.js';
export { DEDUPLICATION_MODES } from './engine/dedupe.js';
export type { Deduplication } from './engine/dedupe.js';
export { ENTRY_FIELDS } from './engine/entry.js';
export type { Entry } from './engine/entry.js';
export { toLegacyEntry } from './engine/legacy.js';
export { MisconfigurationMonitor } from './engine/misconfiguration.js';
export { combineObservers } from './engine/observer.js';
export type { VerifierObserver } from './engine/observer.js';
export { MAX_CLASSIFICATION_LENGTH, MAX_PATTERN_LENGTH, checkOverrideRules } from './engine/overrides.js';
export type { OverrideRule } from './engine/overrides.js';
export type { Planning } from './engine/planning.js';
export { QUALITIES, checkQuality, findQuality, qualityName } from './engine/quality.js';
export type { Quality, QualityLevel } from './engine/quality.js';
export { nextTurn } from './engine/turns.js';
export { createSharedVerifier, createVerifier, planningFor } from './engine/verifier.js';
export type { Verifier, VerifierOptions } from './engine/verifier.js';
export { isGlobalAddress } from './net/ip-ranges.js';
export { closestName } from './options/names.js';
export { LocalRecipientLedger, pairKey } from './smtp/egress/budget.js';
export type { Grant, RateLimits, RecipientLedger } from './smtp/egress/budget.js';
export { Cooling, FIRST_COOLDOWN_MS, LONGEST_COOLDOWN_MS } from './smtp/egress/cooling.js';
export type { SmtpEgress } from './smtp/egress/egresses.js';
export type { ProviderProfile } from './smtp/egress/providers.js';
export { createNodemailerTransport } from './smtp/nodemailer-transport.js';
export { SmtpTransportError } from './smtp/transport.js';
export type { SmtpOpenOptions, SmtpSession, SmtpTransport } from './smtp/transport.js';
export { CURRENT_STATUS_CODES, LEGACY_STATUS_CODES, STATUS_CODES, isStatusCode } from './status/catalogue.js';
export type { Classification, StatusCode } from './status/catalogue.js';
export { wildcardMatches } from './text/wildcard.js';
export { VERSION } from './version.js';
