// Both trees' suggesters in one process, timed in turns over the same parsed addresses (all, those without an
// `xn--` label, those with one), 15 rounds with the order swapped every round: what separate processes, each with its
// own heap and compiled code, cannot tell apart under load. compare.mjs writes the entry that imports this with the
// base tree's suggester (`./base-suggester.js`, the path replaced) and bundles it.
import { parseWithPositions } from '../../packages/mailverify/src/syntax/parse.js';
import type { ParsedAddress } from '../../packages/mailverify/src/syntax/types.js';
// @ts-expect-error plain JavaScript module
import { LARGE_MIX, SEED, realisticCorpus } from '../syntax/corpus.mjs';

interface AnySuggester {
  suggest(localPart: string, asciiDomain: string, international?: boolean): string[];
}

export function runSameProcess(suggesters: Record<string, AnySuggester>, lines: number, rounds = 15): void {
  const inputs = realisticCorpus(lines, SEED + 3, { companies: 40_000, mix: LARGE_MIX }) as string[];
  const parsed = inputs.map((input) => parseWithPositions(input).result).filter((r): r is ParsedAddress => r.ok && !r.domainPart.startsWith('['));
  const sets: Record<string, ParsedAddress[]> = {
    all: parsed,
    'without xn--': parsed.filter((p) => !p.hasInternationalDomainName),
    'with xn--': parsed.filter((p) => p.hasInternationalDomainName),
  };
  const runs = new Map<string, number[]>();
  const entries = Object.entries(suggesters);
  for (let round = 0; round < rounds; round++) {
    for (const [name, suggester] of round % 2 === 0 ? entries : [...entries].reverse()) {
      for (const [setName, set] of Object.entries(sets)) {
        const started = process.hrtime.bigint();
        let n = 0;
        for (const p of set) n += suggester.suggest(p.localPart, p.asciiDomainPart, p.hasInternationalDomainName).length;
        const ns = Number(process.hrtime.bigint() - started) / set.length;
        if (n === -1) console.log(n);
        const key = `${name}, ${setName} (${set.length})`;
        runs.set(key, [...(runs.get(key) ?? []), ns]);
      }
    }
  }
  for (const [key, values] of runs) {
    const sorted = [...values].sort((a, b) => a - b);
    console.log(`same process, ${key}: median ${sorted[sorted.length >> 1]!.toFixed(1)} ns, best ${sorted[0]!.toFixed(1)} ns`);
  }
}
