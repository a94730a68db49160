/** The rows of a diagnosis: one per egress and check, what was seen and, for a warning or a failure, what to do. */

/** The checks, in the order of their rows (docs/doctor.md). */
export const DIAGNOSIS_CHECKS = ['proxy', 'public-address', 'ptr', 'helo', 'spf', 'dnsbl', 'port25'] as const;

export type DiagnosisCheck = (typeof DIAGNOSIS_CHECKS)[number];

export type DiagnosisResult = 'ok' | 'warn' | 'fail';

/** One row of `diagnoseEgress` (and of `mailverify doctor --json`). */
export interface EgressDiagnosis {
  /** The egress's id (`default` without `smtp.egress`). */
  readonly egress: string;
  readonly check: DiagnosisCheck;
  readonly result: DiagnosisResult;
  /** What was seen, and for `warn` and `fail` what to do, after ` — `, on one line. Never a proxy's password. */
  readonly detail: string;
}

/** A check's outcome before it is given its egress. */
export interface Finding {
  readonly result: DiagnosisResult;
  readonly detail: string;
}

export const ok = (seen: string): Finding => ({ result: 'ok', detail: oneLine(seen) });
export const warn = (seen: string, fix: string): Finding => ({ result: 'warn', detail: `${oneLine(seen)} — ${oneLine(fix)}` });
export const fail = (seen: string, fix: string): Finding => ({ result: 'fail', detail: `${oneLine(seen)} — ${oneLine(fix)}` });

/** Text from the network (a reply, a TXT record) on one line, control characters shown as spaces, and not too long. */
export function oneLine(text: string): string {
  const flat = text.replace(/[\u0000-\u001f\u007f]+/gu, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

/** The row of a check that could not run because the public address is not known. */
export const NEEDS_PUBLIC_ADDRESS = warn(
  'not checked: it needs the public address',
  'give the address exchangers see this egress come from (--public-address, the egress\'s publicAddress)',
);
