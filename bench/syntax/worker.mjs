// Measures ONE implementation on ONE corpus, in a process of its own (so JIT state, inline caches and
// GC pressure from other libraries cannot leak into the measurement). Started by run.mjs.
//
//   node bench/syntax/worker.mjs <peer> <corpus> <durationMs> [baselineDir]
//
// `baseline` is mailverify built in another checkout (`baselineDir`/dist/index.js), to compare two versions.
//
// Prints one JSON line: {peer, corpus, addressesPerSecond, bestPassAddressesPerSecond, accepted, total, processed,
// passes, elapsedMs}. `accepted`/`total` are from one full pass over the corpus; `processed` is the number of calls
// made in the timed loop; `bestPassAddressesPerSecond` is the rate of its fastest complete pass over the corpus (a
// pass the rest of a busy machine did not interrupt; the loop's rate when no pass completed).

import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { getCorpus } from './corpus.mjs';

const require = createRequire(import.meta.url);

const WARMUP_PASSES = 3;
const CLOCK_EVERY = 256; // addresses between clock reads: keeps timer overhead negligible

/** Each loader returns `(address: string) => boolean`, called with the library's default options. */
export const PEERS = {
  validator: () => {
    const { isEmail } = require('validator');
    return (s) => isEmail(s);
  },
  // @hapi/address 5.x exports isEmailValid (isEmail was the 4.x name); no options = its defaults.
  '@hapi/address': () => {
    const { isEmailValid } = require('@hapi/address');
    return (s) => isEmailValid(s);
  },
  'email-addresses': () => {
    const { parseOneAddress } = require('email-addresses');
    return (s) => parseOneAddress(s) !== null;
  },
  isemail: () => {
    const { validate } = require('isemail');
    return (s) => validate(s); // boolean form: no errorLevel option
  },
  'email-validator': () => {
    const { validate } = require('email-validator');
    return (s) => validate(s);
  },
  // The built package (npm run build), i.e. what users get: dist/index.js of this checkout.
  mailverify: () => loadMailverify(new URL('../../packages/mailverify/dist/index.js', import.meta.url)),
  baseline: (dir) => loadMailverify(pathToFileURL(path.join(dir, 'dist/index.js'))),
};

async function loadMailverify(url) {
  const { parseAddress } = await import(url.href);
  if (typeof parseAddress !== 'function') throw new Error(`${url.pathname} does not export parseAddress`);
  return (s) => parseAddress(s).ok;
}

/** One full pass; returns how many addresses were accepted. */
function pass(check, corpus) {
  let accepted = 0;
  for (let i = 0; i < corpus.length; i++) if (check(corpus[i])) accepted++;
  return accepted;
}

async function main() {
  const [peer, corpusName, durationArg, baselineDir] = process.argv.slice(2);
  const durationMs = Number(durationArg ?? 1500);
  if (!PEERS[peer] || !Number.isFinite(durationMs) || durationMs <= 0 || (peer === 'baseline' && !baselineDir)) {
    console.error(`usage: worker.mjs <${Object.keys(PEERS).join('|')}> <corpus> <durationMs> [baselineDir]`);
    process.exit(2);
  }
  const check = await PEERS[peer](baselineDir);

  // A JSON round trip turns concatenated (rope) strings into flat ones, as if read from a file, so
  // no implementation pays for flattening that the others got for free.
  const corpus = JSON.parse(JSON.stringify(getCorpus(corpusName)));

  // Warm-up: lets the JIT optimise the hot paths; the first pass also gives the acceptance count.
  const accepted = pass(check, corpus);
  for (let i = 1; i < WARMUP_PASSES; i++) {
    if (pass(check, corpus) !== accepted) throw new Error(`${peer} is not deterministic`);
  }

  // Timed loop: cycle over the corpus until the duration is spent. The accepted count is printed
  // below, so the calls cannot be optimised away.
  let processed = 0;
  let timedAccepted = 0;
  let i = 0;
  let passes = 0;
  let bestPassMs = Infinity;
  const start = performance.now();
  const deadline = start + durationMs;
  let now = start;
  let passStart = start;
  while (now < deadline) {
    for (let k = 0; k < CLOCK_EVERY; k++) {
      if (check(corpus[i])) timedAccepted++;
      if (++i === corpus.length) {
        i = 0;
        // One clock read per pass over the corpus: the duration of each complete pass.
        const passEnd = performance.now();
        bestPassMs = Math.min(bestPassMs, passEnd - passStart);
        passStart = passEnd;
        passes++;
      }
    }
    processed += CLOCK_EVERY;
    now = performance.now();
  }
  const elapsedMs = now - start;
  const addressesPerSecond = Math.round((processed / elapsedMs) * 1000);

  console.log(
    JSON.stringify({
      peer,
      corpus: corpusName,
      addressesPerSecond,
      bestPassAddressesPerSecond: passes > 0 ? Math.round((corpus.length / bestPassMs) * 1000) : addressesPerSecond,
      accepted,
      total: corpus.length,
      processed,
      passes,
      timedAccepted,
      elapsedMs: Math.round(elapsedMs),
    }),
  );
}

await main();
