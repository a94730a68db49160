/**
 * The offline path without a batch: one input to its entry, synchronously. With `checks: 'syntax'` and no
 * deduplication, `verifyMany` decides every address before any network work (batch.ts finishes it as it is read);
 * this gives the same entry for the same input, index and options, without the batch's window and promises, so that
 * a caller that splits a list into chunks (the CLI's worker threads) can check each chunk on its own.
 */
import { createLists } from '../lists/lists.js';
import { classificationOf, type StatusCode } from '../status/catalogue.js';
import { createSuggester, type Suggester } from '../suggest/suggest.js';
import { parseWithPositions } from '../syntax/parse.js';
import { syntaxPolicyOf, type SyntaxPolicy } from '../syntax/policy.js';
import type { ParsedAddress } from '../syntax/types.js';
import { makeEntry, type Entry } from './entry.js';
import { offlineStages, type Flags, type StageContext } from './stages.js';
import { checkOverrideRules, compileOverrides } from './overrides.js';
import type { VerifierOptions } from './options.js';

/** The verifier options the offline stages read; the rest (DNS, SMTP, passes) has no effect offline. */
export type OfflineOptions = Pick<VerifierOptions, 'syntax' | 'allowPrivateAddresses' | 'lists' | 'suggestions' | 'classifications' | 'overrides'>;

/** The classification of a status: the options' own names first, else the default. */
export function classifierOf(classifications: VerifierOptions['classifications']): (status: StatusCode) => string {
  return classifications === undefined ? classificationOf : (status) => classifications[status] ?? classificationOf(status);
}

/**
 * Suggestions, never for an address literal; for a domain known to have MX records, only the common domain it looks
 * like (a homograph), no typo.
 */
export function typoSuggestions(suggester: Suggester | null, parsed: ParsedAddress, hasMx: boolean): string[] | undefined {
  if (suggester === null || parsed.domainPart.charCodeAt(0) === 0x5b) return undefined;
  if (hasMx) return suggester.lookAlike(parsed.localPart, parsed.asciiDomainPart, parsed.hasInternationalDomainName);
  return suggester.suggest(parsed.localPart, parsed.asciiDomainPart, parsed.hasInternationalDomainName);
}

/** The entry of an input as `verifyMany` with `checks: 'syntax'` gives it (deduplication Off). */
export type OfflineCheck = (index: number, inputData: string, custom?: string) => Entry;

export function createOfflineCheck(options: OfflineOptions = {}): OfflineCheck {
  const syntax: SyntaxPolicy = syntaxPolicyOf(options.syntax, 'createVerifier', 'syntax.');
  const classify = classifierOf(options.classifications);
  const suggester = options.suggestions === false ? null : createSuggester();
  const overrideOf = compileOverrides(options.overrides === undefined ? [] : checkOverrideRules(options.overrides, 'createVerifier: option overrides'));
  // Only the offline stages read this context: no DNS, no prober.
  const context = { checks: 'syntax', lists: createLists(options.lists), allowPrivateAddresses: options.allowPrivateAddresses === true } as StageContext;

  const check = (index: number, inputData: string, custom: string | undefined): Entry => {
    const { result: parsed, domainStart } = parseWithPositions(inputData, syntax);
    if (!parsed.ok) {
      const { status, syntaxFailureIndex } = parsed;
      return makeEntry({ index, inputData, status, classification: classify(status), syntaxFailureIndex, custom });
    }
    const flags: Flags = { isDisposableEmailAddress: false, isRoleAccount: false, isFreeEmailAddress: false };
    const offline = offlineStages(parsed, domainStart, context, flags, overrideOf);
    // With checks 'syntax' the offline stages always decide.
    const status = offline.status ?? 'UnhandledException';
    const { syntaxFailureIndex, classification = classify(status) } = offline.status === null ? {} : offline;
    const suggestions = typoSuggestions(suggester, parsed, false);
    return makeEntry({ index, inputData, status, classification, parsed, flags, syntaxFailureIndex, suggestions, custom });
  };

  return (index, inputData, custom) => {
    try {
      return check(index, inputData, custom);
    } catch {
      // A bug of ours: the input still gets its one result, as in a batch.
      return makeEntry({ index, inputData, status: 'UnhandledException', classification: classify('UnhandledException'), custom });
    }
  };
}
