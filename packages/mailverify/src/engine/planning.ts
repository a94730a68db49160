/**
 * What a planner that spreads one batch over several processes needs of a verifier (the cluster's workers): where an
 * address's SMTP work would go, and the pass settings of a quality level. Internal to the package: not exported from
 * its entry points.
 */
import { deduplicationKey, type Deduplication } from './dedupe.js';
import { cachedMailDomain, resolveMailDomain } from '../domain/mail-domain.js';
import type { StatusCode } from '../status/catalogue.js';
import { parseWithPositions } from '../syntax/parse.js';
import type { BatchContext, LevelSettings } from './batch.js';
import type { Quality, QualityLevel } from './quality.js';
import { offlineStages, type Flags } from './stages.js';

export interface Planning {
  /**
   * The address's route: `mx:<host>` for the preferred mail exchanger of its domain, `ip:<address>` for an address
   * literal probed there, or '' when its result needs no SMTP work (a syntax error, a list, a DNS answer). Work with one
   * route is best done by one session (the same connections, one catch-all probe per exchanger and domain). The DNS
   * answers go to the verifier's cache.
   */
  route(inputData: string): Promise<string>;
  /** The address's deduplication key (docs/verification.md#deduplication): equal keys, one address. */
  dedupeKey(inputData: string, mode: Exclude<Deduplication, 'Off'>): string;
  /** Passes, the wait between them and SMTP timeouts of a quality level (the verifier's own when absent). */
  level(quality?: Quality | QualityLevel): LevelSettings;
  /** Results that a later pass may change. */
  readonly transient: ReadonlySet<StatusCode>;
}

export function planningOf(context: BatchContext): Planning {
  return {
    route: async (inputData) => {
      const { result: parsed, domainStart } = parseWithPositions(inputData, context.syntax);
      if (!parsed.ok) return '';
      const flags: Flags = { isDisposableEmailAddress: false, isRoleAccount: false, isFreeEmailAddress: false };
      const offline = offlineStages(parsed, domainStart, context, flags);
      if (offline.status !== null) return '';
      if (offline.probeAt !== null) return `ip:${offline.probeAt}`;
      const domain = parsed.asciiDomainPart;
      const options = { allowPrivateAddresses: context.allowPrivateAddresses };
      const mailDomain = cachedMailDomain(context.dns, domain, options) ?? (await resolveMailDomain(context.dns, domain, options));
      if (mailDomain.status !== null || context.checks !== 'smtp') return '';
      const preferred = mailDomain.exchangers[0];
      return preferred === undefined ? '' : `mx:${preferred.host.toLowerCase()}`;
    },
    dedupeKey: (inputData, mode) => deduplicationKey(inputData, parseWithPositions(inputData, context.syntax).result, mode),
    level: (quality) => (quality === undefined ? context.level : context.qualityLevel(quality)),
    transient: context.transient,
  };
}
