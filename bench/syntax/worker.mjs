// Measures ONE implementation on ONE corpus, in a process of its own (so JIT state, inline caches and
// GC pressure from other libraries cannot leak into the measurement). Started by run.mjs.
//
//   node bench/syntax/worker.mjs <peer> <corpus> <durationMs>
//
// Prints one JSON line: {peer, corpus, addressesPerSecond, accepted, total, processed, elapsedMs}.
// `accepted`/`total` are from one full pass over the corpus; `processed` is the number of calls
// made in the timed loop.

import { createRequire } from 'node:module';
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
  mailverify: async () => {
    // The built package (npm run build), i.e. what users get; /work/main/dist/index.js in this checkout.
    const { parseAddress } = await import(new URL('../../dist/index.js', import.meta.url).href);
    if (typeof parseAddress !== 'function') throw new Error('dist/index.js does not export parseAddress');
    return (s) => parseAddress(s).ok;
  },
};

/** One full pass; returns how many addresses were accepted. */
function pass(check, corpus) {
  let accepted = 0;
  for (let i = 0; i < corpus.length; i++) if (check(corpus[i])) accepted++;
  return accepted;
}

async function main() {
  const [peer, corpusName, durationArg] = process.argv.slice(2);
  const durationMs = Number(durationArg ?? 1500);
  if (!PEERS[peer] || !Number.isFinite(durationMs) || durationMs <= 0) {
    console.error(`usage: worker.mjs <${Object.keys(PEERS).join('|')}> <corpus> <durationMs>`);
    process.exit(2);
  }
  const check = await PEERS[peer]();

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
  const start = performance.now();
  const deadline = start + durationMs;
  let now = start;
  while (now < deadline) {
    for (let k = 0; k < CLOCK_EVERY; k++) {
      if (check(corpus[i])) timedAccepted++;
      if (++i === corpus.length) i = 0;
    }
    processed += CLOCK_EVERY;
    now = performance.now();
  }
  const elapsedMs = now - start;

  console.log(
    JSON.stringify({
      peer,
      corpus: corpusName,
      addressesPerSecond: Math.round((processed / elapsedMs) * 1000),
      accepted,
      total: corpus.length,
      processed,
      timedAccepted,
      elapsedMs: Math.round(elapsedMs),
    }),
  );
}

await main();
