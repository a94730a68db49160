/**
 * Evidence (opt-in): what the SMTP stage saw of one recipient. The prober writes it into the sink a probe request
 * carries: the exchanger and address asked, the egress the session left by, and the replies that decided, each with
 * the classification rule that read it (`explainSmtpReply`). A later attempt (another exchanger, egress or pass)
 * replaces what an earlier one wrote, so the sink ends with the attempt that gave the result.
 */
import { explainSmtpReply, type SmtpReplyPhase, type SmtpReplyRule } from './classify.js';
import type { SmtpReply } from './reply.js';

/** The most of a reply's text an event or evidence carries. */
export const MAX_EVIDENCE_TEXT = 512;

export interface EvidenceReply {
  readonly phase: SmtpReplyPhase;
  readonly code: number;
  readonly enhancedCode?: string;
  /** At most 512 characters. */
  readonly text: string;
}

/** The sink a probe request carries; absent fields were not reached. */
export interface SmtpEvidence {
  /** The exchanger's host name (absent for an address literal). */
  exchanger?: string;
  address?: string;
  /** The egress's id. */
  egress?: string;
  replies?: EvidenceReply[];
  /** The rule that read the last reply, the one that decided. */
  rule?: SmtpReplyRule;
}

/** A reply as evidence shows it, and the rule that read it (from the whole text). */
export interface WitnessedReply {
  readonly reply: EvidenceReply;
  readonly rule: SmtpReplyRule;
}

export function witnessReply(phase: SmtpReplyPhase, reply: SmtpReply): WitnessedReply {
  const shown: EvidenceReply = {
    phase,
    code: reply.code,
    ...(typeof reply.enhancedCode === 'string' && { enhancedCode: reply.enhancedCode }),
    text: reply.text.slice(0, MAX_EVIDENCE_TEXT),
  };
  return { reply: shown, rule: explainSmtpReply(phase, reply).rule };
}

/** An attempt through `egress` at `address`: what it saw replaces what earlier attempts wrote. */
export function witness(evidence: SmtpEvidence, exchanger: string, address: string, egress: string, replies: readonly WitnessedReply[]): void {
  if (exchanger === '') delete evidence.exchanger;
  else evidence.exchanger = exchanger;
  evidence.address = address;
  evidence.egress = egress;
  delete evidence.replies;
  delete evidence.rule;
  for (const witnessed of replies) addReply(evidence, witnessed);
}

/** One more deciding reply (the catch-all probe's, after the recipient's own). */
export function addReply(evidence: SmtpEvidence, witnessed: WitnessedReply): void {
  (evidence.replies ??= []).push(witnessed.reply);
  evidence.rule = witnessed.rule;
}
