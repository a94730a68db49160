/**
 * One million addresses through mailverify's verifyMany on the mail lab, with zero delays: wall time, peak RSS of
 * the verifier's process, and that every index 0..N-1 came back exactly once. The lab runs here and forgets its
 * transcripts every second (it keeps every line otherwise); the verifier runs in worker.mjs, which generates the
 * addresses lazily: `user<i>@d<i mod 100>-lab.com` (the formula is repeated in worker.mjs).
 *
 *   npm run bench:batch -- --million            # 1,000,000 addresses
 *   npm run bench:batch -- --million=50000      # fewer
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MailLab, MailLabScenario } from '../../test/lab/mail-lab.js';
import type { ServerSpec } from '../../test/lab/smtp-responder.js';
import { domainName } from './scenario.js';

const HERE = new URL('../batch/', import.meta.url);
const WORKER = fileURLToPath(new URL('worker.mjs', HERE));
const DOMAINS = 100;
const CATCH_ALL_DOMAINS = 10;

/** Whether user<i> has a mailbox: 60% do, spread by a multiplicative hash. */
function exists(i: number): boolean {
  return (Math.imul(i, 2654435761) >>> 0) % 10 < 6;
}

function millionScenario(count: number, port: number): MailLabScenario {
  const mailboxes: string[][] = Array.from({ length: DOMAINS }, () => []);
  for (let i = 0; i < count; i++) {
    const d = i % DOMAINS;
    if (d >= CATCH_ALL_DOMAINS && exists(i)) mailboxes[d]?.push(`user${i}`);
  }
  const servers: Record<string, ServerSpec> = {};
  const domains: Record<string, string[]> = {};
  for (let d = 0; d < DOMAINS; d++) {
    servers[`mx${d}`] = d < CATCH_ALL_DOMAINS ? { acceptAll: true } : { mailboxes: mailboxes[d] ?? [] };
    domains[domainName(d)] = [`mx${d}`];
  }
  return { engine: 'raw', port, servers, domains };
}

export async function runMillion(
  given: string | undefined,
  startLab: (scenario: MailLabScenario) => Promise<MailLab | undefined>,
): Promise<void> {
  const count = Number(given ?? 1_000_000);
  if (!Number.isInteger(count) || count < 1) throw new Error(`--million=${given}: a positive whole number, please`);
  const lab = await startLab(millionScenario(count, 25));
  if (lab === undefined) return;
  const dir = mkdtempSync(join(tmpdir(), 'bench-million-'));
  const totals = { connections: 0, rcpts: 0, dnsQueries: 0 };
  const collect = (): void => {
    const stats = lab.stats();
    totals.connections += stats.connections;
    totals.rcpts += stats.rcpts;
    totals.dnsQueries += lab.dns.queries.length;
    lab.reset();
  };
  const timer = setInterval(collect, 1000);
  try {
    const optionsFile = join(dir, 'options.json');
    writeFileSync(optionsFile, JSON.stringify({ dns: lab.dnsAddress, port: lab.port, count, domains: DOMAINS }));
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [WORKER, 'million', '-', optionsFile], { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => (text += chunk));
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`million worker: exit ${code}`))));
    });
    clearInterval(timer);
    collect();
    const result = JSON.parse(out) as {
      wallMs: number;
      cpuMs: number;
      maxRssKb: number;
      answered: number;
      duplicates: number;
      missing: number;
      statuses: Record<string, number>;
    };
    const lines = [
      `${count.toLocaleString('en')} addresses over ${DOMAINS} domains (${CATCH_ALL_DOMAINS} catch-all), zero delay, ` +
        `\`verifyMany\` with no options; Node ${process.version}, ${cpus().length} cores.`,
      '',
      '| wall time | addresses/s | peak RSS (verifier process) | CPU per address | answered | duplicates | missing | connections | RCPT commands | DNS queries |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      `| ${(result.wallMs / 1000).toFixed(1)} s | ${Math.round((count * 1000) / result.wallMs).toLocaleString('en')} | ` +
        `${Math.round(result.maxRssKb / 1024)} MB | ${Math.round((result.cpuMs * 1000) / count)} µs | ` +
        `${result.answered.toLocaleString('en')} | ${result.duplicates} | ${result.missing} | ` +
        `${totals.connections.toLocaleString('en')} | ${totals.rcpts.toLocaleString('en')} | ${totals.dnsQueries.toLocaleString('en')} |`,
      '',
      `Statuses: ${Object.entries(result.statuses)
        .map(([status, n]) => `${status} ${n.toLocaleString('en')}`)
        .join(', ')}.`,
    ];
    const text = lines.join('\n');
    console.log(text);
    if (count === 1_000_000) writeFileSync(fileURLToPath(new URL('last-million.md', HERE)), `${text}\n`);
  } finally {
    clearInterval(timer);
    rmSync(dir, { recursive: true, force: true });
    await lab.close();
  }
}
