/**
 * mailverify: email address verification with the exact statuses of the verification service it reproduces.
 * Public surface: named exports only, each described in the README.
 */
export { parseAddress } from './syntax/parse.js';
export type { ParseResult, ParsedAddress, SyntaxFailure } from './syntax/types.js';
export type { SyntaxOptions } from './syntax/policy.js';
export {
  STATUS_CODES,
  CURRENT_STATUS_CODES,
  LEGACY_STATUS_CODES,
  classificationOf,
  groupsOf,
  isInGroup,
  isStatusCode,
} from './status/catalogue.js';
export type { StatusCode, SyntaxStatus, StatusGroup, Classification } from './status/catalogue.js';
export { PROVIDER_RULES } from './syntax/provider-rules.js';
export type { ProviderRule } from './syntax/provider-rules.js';
export { createVerifier } from './engine/verifier.js';
export type { Verifier, VerifierOptions, SmtpOptions, VerifyManyOptions, BatchInput, BatchProgress, Checks, Quality, QualityLevel, OverrideRule } from './engine/verifier.js';
export { combineObservers } from './engine/observer.js';
export type {
  VerifierObserver,
  VerdictEvent,
  DnsQueryEvent,
  DnsQueryOutcome,
  DnsRecordType,
  ExchangerSkippedEvent,
  SmtpSessionEvent,
  SmtpReplyEvent,
  EgressCoolingEvent,
} from './engine/observer.js';
export { PROVIDER_PROFILES } from './smtp/egress/providers.js';
export type { ProviderProfile, BuiltInProviderProfile } from './smtp/egress/providers.js';
export type { SmtpEgress } from './smtp/egress/egresses.js';
export { diagnoseEgress } from './doctor/diagnose.js';
export type { DiagnoseEgressOptions, EgressDiagnosis, DiagnosisCheck, DiagnosisResult } from './doctor/diagnose.js';
export type { Deduplication } from './engine/dedupe.js';
export type { Entry } from './engine/entry.js';
export type { Evidence, EvidenceReply } from './engine/evidence.js';
export { toLegacyEntry, legacyStatusOf, LEGACY_STATUS_OF } from './engine/legacy.js';
export type { LegacyEntry } from './engine/legacy.js';
export type { Resolver, MxRecord, AddressRecord } from './dns/resolver.js';
export type { DnsCacheOptions, DnsStats } from './dns/lookup.js';
export { classifySmtpReply, explainSmtpReply } from './smtp/classify.js';
export type { SmtpReplyExplanation, SmtpReplyPhase, SmtpReplyRule } from './smtp/classify.js';
export { createNodemailerTransport } from './smtp/nodemailer-transport.js';
export { SmtpTransportError } from './smtp/transport.js';
export type {
  SmtpTransport,
  SmtpSession,
  SmtpOpenOptions,
  SmtpCommandOptions,
  SmtpTransportErrorCode,
  SmtpPhase,
  EgressRoute,
} from './smtp/transport.js';
export type { SmtpReply } from './smtp/reply.js';
