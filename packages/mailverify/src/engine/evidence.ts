/**
 * Evidence (opt-in, mailverify's own field; docs/verification.md#evidence): what decided an entry that reached DNS or
 * SMTP. Fields the verification did not reach are absent.
 */
import type { EvidenceReply, SmtpEvidence } from '../smtp/evidence.js';
import type { SmtpReplyRule } from '../smtp/classify.js';

export type { EvidenceReply } from '../smtp/evidence.js';

export interface Evidence {
  /** The domain's mail exchangers in preference order (the domain itself for the implicit MX; none for a null MX). */
  mx?: string[];
  /** The exchanger asked (absent for an address literal)... */
  exchanger?: string;
  /** ...at this address... */
  address?: string;
  /** ...through this egress (its id). */
  egress?: string;
  /** The replies that decided: the recipient's own (or the refusal before it), then the catch-all probe's. */
  replies?: EvidenceReply[];
  /** The classification rule that read the last of them (explainSmtpReply). */
  rule?: SmtpReplyRule;
}

/** The evidence of one pass, its fields in a fixed order. */
export function evidenceOf(mx: readonly string[] | undefined, smtp: SmtpEvidence | undefined): Evidence {
  const evidence: Evidence = {};
  if (mx !== undefined) evidence.mx = [...mx];
  if (smtp === undefined) return evidence;
  if (smtp.exchanger !== undefined) evidence.exchanger = smtp.exchanger;
  if (smtp.address !== undefined) evidence.address = smtp.address;
  if (smtp.egress !== undefined) evidence.egress = smtp.egress;
  if (smtp.replies !== undefined) evidence.replies = smtp.replies;
  if (smtp.rule !== undefined) evidence.rule = smtp.rule;
  return evidence;
}
