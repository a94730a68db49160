// One verifier over the benchmark's addresses, in its own process (so that its CPU time is its own):
//
//   node [--import ./preload.mjs] worker.mjs VERIFIER INPUTS.json OPTIONS.json
//
// VERIFIER: mailverify | deep-email-validator | @devmehq/email-validator-js. Prints one JSON line: the wall time from
// the first call to the last answer, the CPU time of that span, peak RSS, and a verdict per input (see README.md,
// "Batch benchmark", for how each verifier's output maps to a verdict). With `repeat` (OPTIONS.json) above 1 the list
// is that many lists of distinct addresses on the same domains, verified one after the other in this process
// (mailverify: through the same verifier, as one longer list would be); `passCpuMs` has the CPU time of each pass,
// and verdicts and the wall time are the first pass's. `dist` names another
// build of mailverify to load (a folder with index.js).
import { readFileSync } from 'node:fs';

const [name, inputsFile, optionsFile] = process.argv.slice(2);
const options = JSON.parse(readFileSync(optionsFile, 'utf8'));
if (name === 'million') {
  await million();
  process.exit(0);
}
const allInputs = JSON.parse(readFileSync(inputsFile, 'utf8'));
const passes = options.repeat ?? 1;
const passSize = allInputs.length / passes;
let inputs = allInputs.slice(0, passSize);
let verdicts = new Array(inputs.length);
let details = new Array(inputs.length);
const passCpuMs = [];

/** Runs `pass` `passes` times; verdicts, details and the wall time stay those of the first. */
async function repeated(pass) {
  let first;
  for (let i = 0; i < passes; i++) {
    if (i > 0) {
      inputs = allInputs.slice(i * passSize, (i + 1) * passSize);
      verdicts = new Array(inputs.length);
      details = new Array(inputs.length);
    }
    const started = begin();
    await pass();
    const measured = end(started);
    passCpuMs.push(measured.cpuMs);
    first ??= { measured, verdicts, details };
  }
  inputs = allInputs.slice(0, passSize);
  verdicts = first.verdicts;
  details = first.details;
  return first.measured;
}

const mailverifyDist = new URL(options.dist === undefined ? '../../packages/mailverify/dist/index.js' : `${options.dist}/index.js`, import.meta.url).href;

/**
 * million.ts: `count` addresses made lazily (`user<i>@d<i mod domains, 3 digits>-lab.com`, as in scenario.ts's
 * domainName), through verifyMany with no options; checks that every index comes back exactly once.
 */
async function million() {
  const { createVerifier } = await import(new URL('../../packages/mailverify/dist/index.js', import.meta.url).href);
  const { count, domains } = options;
  function* addresses() {
    for (let i = 0; i < count; i++) yield `user${i}@d${String(i % domains).padStart(3, '0')}-lab.com`;
  }
  const verifier = createVerifier({
    dns: { servers: [options.dns] },
    smtp: { port: options.port },
    allowPrivateAddresses: true,
    heloName: 'bench.test',
  });
  const seen = new Uint8Array(count);
  const statuses = {};
  let answered = 0;
  let duplicates = 0;
  const started = begin();
  for await (const entry of verifier.verifyMany(addresses())) {
    answered++;
    if (seen[entry.index] === 1) duplicates++;
    seen[entry.index] = 1;
    statuses[entry.status] = (statuses[entry.status] ?? 0) + 1;
    if (answered % 100_000 === 0) process.stderr.write(`million: ${answered} answered\n`);
  }
  const measured = end(started);
  await verifier.close();
  const missing = seen.reduce((n, s) => n + (s === 0 ? 1 : 0), 0);
  const maxRssKb = process.resourceUsage().maxRSS;
  process.stdout.write(`${JSON.stringify({ ...measured, maxRssKb, answered, duplicates, missing, statuses })}\n`);
}

/** At most `limit` calls under way at once (so at most `limit` SMTP connections). */
async function pool(limit, run) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, inputs.length) }, async () => {
    while (next < inputs.length) {
      const index = next++;
      await run(inputs[index], index);
    }
  });
  await Promise.all(lanes);
}

const MAILVERIFY_VERDICTS = {
  Success: 'deliverable',
  MailboxDoesNotExist: 'undeliverable',
  ServerIsCatchAll: 'catch-all',
};

const runners = {
  async mailverify() {
    const { createVerifier } = await import(mailverifyDist);
    const verifier = createVerifier({
      dns: { servers: [options.dns] },
      smtp: { port: options.port },
      allowPrivateAddresses: true,
      heloName: 'bench.test',
      ...options.verifier,
    });
    const measured = await repeated(async () => {
      let answered = 0;
      for await (const entry of verifier.verifyMany(inputs)) {
        if (verdicts[entry.index] !== undefined) throw new Error(`input ${entry.index} answered twice`);
        verdicts[entry.index] = MAILVERIFY_VERDICTS[entry.status] ?? 'unknown';
        details[entry.index] = entry.status;
        answered++;
      }
      if (answered !== inputs.length) throw new Error(`${answered} answers for ${inputs.length} inputs`);
    });
    await verifier.close();
    return measured;
  },

  async 'deep-email-validator'() {
    const { validate } = await import('deep-email-validator');
    return repeated(() => pool(options.cap, async (email, index) => {
      // The SMTP probe, without the typo and disposable checks (not what is measured here).
      const result = await validate({
        email,
        sender: 'verify@bench.test',
        validateRegex: true,
        validateTypo: false,
        validateDisposable: false,
        validateMx: true,
        validateSMTP: true,
      });
      const reason = result.reason === undefined ? 'valid' : `${result.reason}: ${result.validators[result.reason]?.reason}`;
      details[index] = reason;
      if (result.valid) verdicts[index] = 'deliverable';
      else if (result.reason === 'smtp' && result.validators.smtp?.reason === 'Mailbox not found.') {
        verdicts[index] = 'undeliverable';
      } else verdicts[index] = 'unknown';
    }));
  },

  async '@devmehq/email-validator-js'() {
    const { verifyEmail } = await import('@devmehq/email-validator-js');
    return repeated(() => pool(options.cap, async (emailAddress, index) => {
      const result = await verifyEmail({ emailAddress, verifyMx: true, verifySmtp: true, timeout: 4000 });
      details[index] = `validMx ${result.validMx}, validSmtp ${result.validSmtp}`;
      verdicts[index] =
        result.validSmtp === true ? 'deliverable' : result.validSmtp === false ? 'undeliverable' : 'unknown';
    }));
  },
};

function begin() {
  return { wall: performance.now(), cpu: process.cpuUsage() };
}

function end(started) {
  const cpu = process.cpuUsage(started.cpu);
  return { wallMs: performance.now() - started.wall, cpuMs: (cpu.user + cpu.system) / 1000 };
}

const runner = runners[name];
if (runner === undefined) throw new Error(`unknown verifier ${name}`);
const measured = await runner();
const missing = verdicts.findIndex((v) => v === undefined);
if (missing >= 0) throw new Error(`input ${missing} got no answer`);
process.stdout.write(
  `${JSON.stringify({ ...measured, passCpuMs, maxRssKb: process.resourceUsage().maxRSS, verdicts, details })}\n`,
);
// The peers leave sockets and timers behind on some paths; the measurement is done.
process.exit(0);
