/**
 * SMTP stage throughput against the mail lab on loopback (the raw responder, which answers at once, and smtp-server,
 * which holds each greeting back 100 ms): the whole pipeline of createVerifier, DNS included, for a batch spread
 * over a few domains. Compares the probe strategy (batched recipients, pipelining, connection reuse) with one
 * address per transaction and no pipelining, measured in the same run. Loopback has no round-trip time, so these
 * figures show what the engine costs, not what the Internet allows.
 *
 *   npm run bench:smtp
 */
import { cpus } from 'node:os';
import { createVerifier, type VerifierOptions } from '../../packages/mailverify/src/index.js';
import { startMailLab, type MailLab } from '../../test/lab/mail-lab.js';

const ADDRESSES = 2_000;
const DOMAINS = 20;
const RUNS = 5;

interface Variant {
  name: string;
  engine: 'raw' | 'smtp-server';
  pipelining: boolean;
  smtp: VerifierOptions['smtp'];
}

const VARIANTS: Variant[] = [
  { name: 'batched, pipelined (defaults)', engine: 'raw', pipelining: true, smtp: {} },
  { name: 'batched, no PIPELINING offered', engine: 'raw', pipelining: false, smtp: {} },
  { name: 'one recipient per transaction', engine: 'raw', pipelining: true, smtp: { maxRecipientsPerTransaction: 1 } },
  { name: 'batched, pipelined, smtp-server', engine: 'smtp-server', pipelining: true, smtp: {} },
];

function addresses(): string[] {
  // Half known mailboxes, half unknown, spread over the domains.
  return Array.from({ length: ADDRESSES }, (_, i) => `${i % 2 ? 'user' : 'nobody'}${i}@d${i % DOMAINS}-bench.com`);
}

async function runOnce(lab: MailLab, variant: Variant, inputs: string[]): Promise<{ perSecond: number; connections: number; transactions: number }> {
  lab.reset();
  const verifier = createVerifier({
    heloName: 'bench.mailverify.example',
    mailFrom: 'bench@mailverify.example',
    allowPrivateAddresses: true,
    dns: { servers: [lab.dnsAddress] },
    smtp: { port: lab.port, ...variant.smtp },
  });
  const started = performance.now();
  let done = 0;
  for await (const entry of verifier.verifyMany(inputs)) {
    if (entry.status !== 'Success' && entry.status !== 'MailboxDoesNotExist') throw new Error(`unexpected ${entry.status}`);
    done++;
  }
  const seconds = (performance.now() - started) / 1000;
  await verifier.close();
  const stats = lab.stats();
  return { perSecond: done / seconds, connections: stats.connections, transactions: stats.transactions };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const inputs = addresses();
  const mailboxes = inputs.filter((_, i) => i % 2).map((a) => a.slice(0, a.indexOf('@')));
  const rows: string[] = [];
  let baseline = 0;
  for (const variant of VARIANTS) {
    const domains = Object.fromEntries(Array.from({ length: DOMAINS }, (_, d) => [`d${d}-bench.com`, ['mx']]));
    const lab = await startMailLab({
      servers: { mx: { engine: variant.engine, mailboxes, pipelining: variant.pipelining } },
      domains,
    });
    try {
      const results = [];
      for (let run = 0; run < RUNS; run++) results.push(await runOnce(lab, variant, inputs));
      const perSecond = median(results.map((r) => r.perSecond));
      if (baseline === 0) baseline = perSecond;
      const last = results.at(-1)!;
      rows.push(
        `| ${variant.name} | ${Math.round(perSecond).toLocaleString('en')} | ${(perSecond / baseline).toFixed(2)}× | ${last.connections} | ${last.transactions} |`,
      );
    } finally {
      await lab.close();
    }
  }
  console.log(`SMTP stage, ${ADDRESSES.toLocaleString('en')} addresses over ${DOMAINS} domains on one lab exchanger,`);
  console.log(`median of ${RUNS} runs; Node ${process.version}, ${cpus().length} cores.\n`);
  console.log('| variant | addresses/s | vs defaults | connections | transactions |');
  console.log('|---|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
