// The suggester's cost per address on the offline hot path: `suggester.suggest` over the parsed addresses of the
// realistic corpus (the input of bench/offline, same generator and seed), best of --passes passes, in nanoseconds per
// address; and, where the tree has it, the look-alike flag's check as the pipeline asks it. One JSON line.
//
//   npx esbuild bench/suggest/run.ts --bundle --platform=node --format=esm --packages=external --outfile=bench/.out/suggest.mjs
//   node bench/suggest/compare.mjs [--base=DIR] [--rounds=7]     # this tree against another's, interleaved
import { parseArgs } from 'node:util';
import * as suggestModule from '../../packages/mailverify/src/suggest/suggest.js';
import { parseWithPositions } from '../../packages/mailverify/src/syntax/parse.js';
import type { ParsedAddress } from '../../packages/mailverify/src/syntax/types.js';
// @ts-expect-error plain JavaScript module
import { LARGE_MIX, SEED, realisticCorpus } from '../syntax/corpus.mjs';
import { bestNsPerItem } from '../offline/best-of.js';

const { values: flags } = parseArgs({ options: { lines: { type: 'string', default: '200000' }, passes: { type: 'string', default: '7' } } });
const passes = Number(flags.passes);
const inputs = realisticCorpus(Number(flags.lines), SEED + 3, { companies: 40_000, mix: LARGE_MIX }) as string[];
const parsed = inputs
  .map((input) => parseWithPositions(input).result)
  .filter((r): r is ParsedAddress => r.ok && !r.domainPart.startsWith('['));
const suggester = suggestModule.createSuggester();
// The look-alike flag's check, in a tree that has one.
const mixedScript = (suggestModule as { isMixedScriptDomain?: (asciiDomain: string) => boolean }).isMixedScriptDomain;

const time = (body: () => number): number => bestNsPerItem(passes, parsed.length, body);

const suggest = time(() => parsed.reduce((n, p) => n + suggester.suggest(p.localPart, p.asciiDomainPart, p.hasInternationalDomainName).length, 0));
const flag = mixedScript === undefined ? null : time(() => parsed.reduce((n, p) => n + (mixedScript(p.asciiDomainPart) ? 1 : 0), 0));
const suggested = parsed.reduce((n, p) => n + (suggester.suggest(p.localPart, p.asciiDomainPart, p.hasInternationalDomainName).length > 0 ? 1 : 0), 0);
console.log(JSON.stringify({ addresses: parsed.length, suggested, suggestNs: suggest, mixedScriptNs: flag }));
