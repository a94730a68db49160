/**
 * Where the time of an offline check goes, per address: each step of the `--checks syntax` pipeline timed on its
 * own in a synchronous loop, the same steps chained without promises, and the engine's `verifyMany` (as the CLI
 * calls it), with and without the CLI's JSON-lines output. Bundled from src/ by `npm run bench:offline`.
 *
 *   node bench/.out/offline-components.mjs [--lines=200000] [--passes=5]
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { BatchedWriter, EncodedChunk } from '../../packages/mailverify/src/cli/output.js';
import { hasPublicTopLevel } from '../../packages/mailverify/src/domain/top-level.js';
import { isoNow as now, makeEntry, type Entry } from '../../packages/mailverify/src/engine/entry.js';
import { createOfflineCheck } from '../../packages/mailverify/src/engine/offline.js';
import { offlineStages, type Flags, type StageContext } from '../../packages/mailverify/src/engine/stages.js';
import { createVerifier } from '../../packages/mailverify/src/engine/verifier.js';
import { createLists } from '../../packages/mailverify/src/lists/lists.js';
import { classificationOf } from '../../packages/mailverify/src/status/catalogue.js';
import { createSuggester } from '../../packages/mailverify/src/suggest/suggest.js';
import { parseWithPositions } from '../../packages/mailverify/src/syntax/parse.js';
import type { ParsedAddress, ParseResult } from '../../packages/mailverify/src/syntax/types.js';
// @ts-expect-error plain JavaScript module
import { LARGE_MIX, SEED, realisticCorpus } from '../syntax/corpus.mjs';
import { bestNsPerItem } from './best-of.js';

const { values: flags } = parseArgs({ options: { lines: { type: 'string', default: '200000' }, passes: { type: 'string', default: '5' } } });
const passes = Number(flags.passes);
const size = Number(flags.lines);

// The first lines of the run.mjs input when it is there (same generator and seed), else generated.
const file = join(os.tmpdir(), `mailverify-offline-${SEED + 3}-1000000.txt`);
let inputs: string[];
try {
  inputs = readFileSync(file, 'utf8').split('\n').slice(0, size);
} catch {
  inputs = JSON.parse(JSON.stringify(realisticCorpus(size, SEED + 3, { companies: 40_000, mix: LARGE_MIX }))) as string[];
}

const parses = inputs.map((input) => parseWithPositions(input));
const parsed = parses.map((p) => p.result).filter((r): r is ParsedAddress => r.ok);
const domains = parsed.filter((p) => !p.domainPart.startsWith('[')).map((p) => p.asciiDomainPart);
const lists = createLists();
const suggester = createSuggester();
const nowhere = new Writable({ write: (_chunk, _encoding, done) => done() });
/** The entry of a parse alone, as the engine makes it. */
function entryOf(index: number, inputData: string, result: ParseResult): Entry {
  if (!result.ok) {
    const { status, syntaxFailureIndex } = result;
    return makeEntry({ index, inputData, status, classification: classificationOf(status), syntaxFailureIndex });
  }
  return makeEntry({ index, inputData, status: 'Success', classification: 'Deliverable', parsed: result });
}
const sampleEntries = inputs.map((input, i) => entryOf(i, input, parses[i]!.result));

/** Best nanoseconds per address over the passes (`count` items per pass, spread over all inputs). */
const time = (body: () => number): number => bestNsPerItem(passes, inputs.length, body);

async function timeAsync(body: () => Promise<number>): Promise<number> {
  let best = Infinity;
  for (let pass = 0; pass < passes; pass++) {
    const started = process.hrtime.bigint();
    await body();
    best = Math.min(best, Number(process.hrtime.bigint() - started));
  }
  return best / inputs.length;
}

const rows: [string, number][] = [];
const row = (name: string, ns: number): void => {
  rows.push([name, ns]);
};

// The output row comes first, before the formatter has seen the engine's entries.
row('JSON lines into the output buffer, entries of a parse alone', time(() => {
  const writer = new BatchedWriter(nowhere);
  for (const entry of sampleEntries) writer.addJsonLine(entry);
  return 0;
}));
row('parseWithPositions', time(() => inputs.reduce((n, input) => n + (parseWithPositions(input).result.ok ? 1 : 0), 0)));
row('lists: disposable, relay, role, free (each on its own)', time(() => {
  let n = 0;
  for (const p of parsed) {
    const literal = p.domainPart.startsWith('[');
    const d = p.asciiDomainPart;
    if (!literal && lists.isDisposableDomain(d)) n++;
    if (!literal && lists.isRelayDomain(d)) n++;
    if (lists.isRoleAccount(p.localPart)) n++;
    if (!literal && lists.isFreeProvider(d)) n++;
  }
  return n;
}));
row('hasPublicTopLevel', time(() => domains.reduce((n, d) => n + (hasPublicTopLevel(d) ? 1 : 0), 0)));
row('suggester.suggest', time(() => parsed.reduce((n, p) => n + (p.domainPart.startsWith('[') ? 0 : suggester.suggest(p.localPart, p.asciiDomainPart).length), 0)));
row('new Date().toISOString()', time(() => inputs.reduce((n) => n + new Date().toISOString().length, 0)));
row('makeEntry of a parse alone', time(() => inputs.reduce((n, input, i) => n + entryOf(i, input, parses[i]!.result).index, 0)));

// The offline stages need only the lists and the checks.
const offlineContext = { checks: 'syntax', lists, allowPrivateAddresses: false } as unknown as StageContext;

/** The engine's offline path for one address (offlineStages, suggestions, makeEntry), chained synchronously. */
function direct(input: string, index: number): Entry {
  const { result, domainStart } = parseWithPositions(input);
  if (!result.ok) return entryOf(index, input, result);
  const flags: Flags = { isDisposableEmailAddress: false, isRoleAccount: false, isFreeEmailAddress: false };
  const offline = offlineStages(result, domainStart, offlineContext, flags);
  const status = offline.status ?? 'Success';
  const literal = result.domainPart.startsWith('[');
  const suggestions = literal ? undefined : suggester.suggest(result.localPart, result.asciiDomainPart);
  return makeEntry({ index, inputData: input, status, classification: classificationOf(status), parsed: result, flags, suggestions });
}
/**
 * The same steps and the same entry, built as one object literal of one shape for all, every field written once in
 * the service's order (undefined where absent): a reference for makeEntry, which leaves absent fields out.
 */
function lean(input: string, index: number): Entry {
  const { result } = parseWithPositions(input);
  if (!result.ok) {
    return { index, inputData: input, classification: classificationOf(result.status), status: result.status, syntaxFailureIndex: result.syntaxFailureIndex, completedOn: now() };
  }
  const literal = result.domainPart.startsWith('[');
  const d = result.asciiDomainPart;
  const disposable = !literal && lists.isDisposableDomain(d);
  const relay = !literal && lists.isRelayDomain(d);
  const status = literal ? 'Success' : !hasPublicTopLevel(d) ? 'DomainDoesNotExist' : disposable ? 'DomainIsWellKnownDea' : relay ? 'MailboxIsDea' : 'Success';
  const suggestions = literal ? [] : suggester.suggest(result.localPart, d);
  return {
    index,
    inputData: input,
    classification: classificationOf(status),
    status,
    emailAddress: result.emailAddress,
    emailAddressLocalPart: result.localPart,
    emailAddressDomainPart: result.domainPart,
    asciiEmailAddressDomainPart: d,
    hasInternationalMailboxName: result.hasInternationalMailboxName,
    hasInternationalDomainName: result.hasInternationalDomainName,
    isDisposableEmailAddress: disposable || relay,
    isRoleAccount: lists.isRoleAccount(result.localPart),
    isFreeEmailAddress: !literal && lists.isFreeProvider(d),
    syntaxFailureIndex: undefined,
    suggestions: suggestions.length > 0 ? suggestions : undefined,
    completedOn: now(),
  };
}

row('all steps chained synchronously (as the batch does them)', time(() => inputs.reduce((n, input, i) => n + direct(input, i).index, 0)));

row('the same, lean entry (one time string per ms, one object literal)', time(() => inputs.reduce((n, input, i) => n + lean(input, i).index, 0)));
row('lean entry + JSON lines into the output buffer (sync)', time(() => {
  const writer = new BatchedWriter(nowhere);
  for (let i = 0; i < inputs.length; i++) writer.addJsonLine(lean(inputs[i]!, i));
  return 0;
}));

const offlineCheck = createOfflineCheck();
row("createOfflineCheck (a worker thread's check per line)", time(() => inputs.reduce((n, input, i) => n + offlineCheck(i, input).index, 0)));
row("createOfflineCheck + EncodedChunk (a worker thread's whole work per line)", time(() => {
  const chunk = new EncodedChunk('jsonl', 'escape', inputs.length * 512);
  for (let i = 0; i < inputs.length; i++) chunk.add(offlineCheck(i, inputs[i]!));
  return chunk.bytes().length;
}));

// Override rules: the cost of a long list, per address, when almost no address matches (every rule of a kind looked
// at). Exact addresses and `*@domain` rules are indexed; general patterns are tried one by one. The checks are timed
// in turns (round after round, the order rotated), and the median of the rounds is reported beside the same check
// without rules.
const ruleSets: [string, { match: string; classification: string }[]][] = [
  ['no rules', []],
  ['10,000 exact-address rules', Array.from({ length: 10_000 }, (_, i) => ({ match: `user${i}@rules.example`, classification: 'Mine' }))],
  ['10,000 `*@domain` rules', Array.from({ length: 10_000 }, (_, i) => ({ match: `*@domain${i}.example`, classification: 'Mine' }))],
  ['100 general patterns (`*word*`)', Array.from({ length: 100 }, (_, i) => ({ match: `*zq${i}x*`, classification: 'Mine' }))],
];
const ruleChecks = ruleSets.map(([, overrides]) => createOfflineCheck({ overrides }));
const ruleTimes: number[][] = ruleSets.map(() => []);
for (let round = 0; round < Math.max(3, passes); round++) {
  for (let turn = 0; turn < ruleChecks.length; turn++) {
    const which = (turn + round) % ruleChecks.length;
    const check = ruleChecks[which]!;
    const started = process.hrtime.bigint();
    inputs.reduce((n, input, i) => n + check(i, input).index, 0);
    ruleTimes[which]!.push(Number(process.hrtime.bigint() - started) / inputs.length);
  }
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
ruleSets.forEach(([name], i) => row(`createOfflineCheck with ${name} (median of rounds, in turns)`, median(ruleTimes[i]!)));

const verifier = createVerifier({ checks: 'syntax' });
row('verifyMany (entries dropped)', await timeAsync(async () => {
  let n = 0;
  for await (const entry of verifier.verifyMany(inputs, { order: 'input' })) n += entry.index;
  return n;
}));
row('verifyMany + JSON lines into the output buffer (the CLI without I/O)', await timeAsync(async () => {
  const writer = new BatchedWriter(nowhere);
  for await (const entry of verifier.verifyMany(inputs, { order: 'input' })) {
    const wait = writer.addJsonLine(entry);
    if (wait !== undefined) await wait;
  }
  await writer.end();
  return 0;
}));
const engineEntries: Entry[] = [];
for await (const entry of verifier.verifyMany(inputs, { order: 'input' })) engineEntries.push(entry);
row("JSON lines into the output buffer, the engine's entries", time(() => {
  const writer = new BatchedWriter(nowhere);
  for (const entry of engineEntries) writer.addJsonLine(entry);
  return 0;
}));
await verifier.close();

console.log(`${inputs.length.toLocaleString('en')} addresses, best of ${passes} passes; ${os.cpus()[0]?.model.trim()}, ${os.cpus().length} cores, Node ${process.version}\n`);
console.log('| Step | ns per address |\n| --- | ---: |');
for (const [name, ns] of rows) console.log(`| ${name} | ${Math.round(ns).toLocaleString('en')} |`);
