// `check --evidence` and `serve --evidence` (and its variable) as an operator runs them, against the mail lab.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { runCli, startServe, verifyThroughServe } from '../lab/serve-process.js';

const ROOT_PASSWORD = 'evidence-root-password';

let lab: MailLab;
let dir: string;

beforeAll(async () => {
  lab = await startMailLab({ servers: { mx: { mailboxes: ['alice'] } }, domains: { 'one-evidence-cli.com': ['mx'] } });
  dir = mkdtempSync(join(tmpdir(), 'mailverify-evidence-'));
});

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

const input = 'alice@one-evidence-cli.com\nnobody@one-evidence-cli.com\nnot an address\n';
const labArgs = () => ['--dns-server', lab.dnsAddress, '--smtp-port', String(lab.port), '--allow-private-addresses', '--helo-name', 'probe.evidence-lab.com'];
type Line = { status: string; evidence?: { exchanger?: string; egress?: string; replies?: { code: number }[] } };
const lines = (stdout: string) => stdout.trim().split('\n').map((line) => JSON.parse(line) as Line);

describe('mailverify check --evidence', () => {
  it('adds evidence to each JSON line that reached DNS or SMTP', async () => {
    const result = await runCli(['check', '-', '--checks', 'smtp', ...labArgs(), '--evidence', '--quiet'], input);
    expect(result.code, result.stderr).toBe(0);
    const [alice, nobody, broken] = lines(result.stdout);
    expect(alice!.status).toBe('Success');
    expect(alice!.evidence).toMatchObject({ exchanger: lab.hostOf('mx'), egress: 'default' });
    expect(alice!.evidence!.replies!.map((reply) => reply.code)).toEqual([250, 550]);
    expect(nobody!.evidence!.replies!.map((reply) => reply.code)).toEqual([550]);
    expect(broken!.evidence).toBeUndefined();
    // Without the flag, none.
    const plain = await runCli(['check', '-', '--checks', 'smtp', ...labArgs(), '--quiet'], input);
    expect(lines(plain.stdout).every((line) => line.evidence === undefined)).toBe(true);
  });

  it('is refused with CSV output (exit 2), and has no effect, with a warning, at --checks syntax', async () => {
    const csv = await runCli(['check', '-', '--checks', 'dns', '--evidence', '--output', 'csv'], input);
    expect(csv.code).toBe(2);
    expect(csv.stderr).toMatch(/--evidence applies to --output jsonl/u);
    const offline = await runCli(['check', '-', '--evidence', '--quiet'], input);
    expect(offline.code).toBe(0);
    expect(offline.stderr).toMatch(/--evidence has no effect with --checks syntax/u);
    expect(lines(offline.stdout).every((line) => line.evidence === undefined)).toBe(true);
  });
});

describe('mailverify serve --evidence', () => {
  const entriesThrough = (origin: string) => verifyThroughServe<Line>(origin, ROOT_PASSWORD, input.trim().split('\n'));

  it('the flag, and MAILVERIFY_EVIDENCE, add evidence to 2.x JSON entries', async () => {
    for (const [args, env] of [[['--evidence'], {}], [[], { MAILVERIFY_EVIDENCE: 'true' }]] as const) {
      const server = await startServe(['--data-dir', join(dir, `serve-${args.length}`), '--log-level', 'silent', ...labArgs(), ...args], {
        MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD,
        ...env,
      });
      try {
        const [alice, nobody, broken] = await entriesThrough(server.origin);
        expect(alice!.evidence).toMatchObject({ exchanger: lab.hostOf('mx'), egress: 'default' });
        expect(nobody!.evidence!.replies!.map((reply) => reply.code)).toEqual([550]);
        expect(broken!.evidence).toBeUndefined();
      } finally {
        await server.stop();
      }
    }
  });
});
