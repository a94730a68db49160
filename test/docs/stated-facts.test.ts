// What the README and docs state about the server's answers, checked against a real server: the 401 details that
// docs/troubleshooting.md explains, and the methods docs/accounts.md says a CORS preflight allows.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, ROOT, ROOT_AUTH, start, type Running } from '../server/http-client.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const TROUBLESHOOTING = readFileSync(join(root, 'docs', 'troubleshooting.md'), 'utf8');
const ACCOUNTS = readFileSync(join(root, 'docs', 'accounts.md'), 'utf8');

/** The first column of the table under a heading: the `detail` texts it explains. */
function detailsUnder(heading: string): string[] {
  const section = TROUBLESHOOTING.slice(TROUBLESHOOTING.indexOf(`## ${heading}`));
  const table = section.slice(0, section.indexOf('\n## ', 3));
  return [...table.matchAll(/^\| `([^`]+)` \|/gmu)].map((match) => match[1]!);
}

let server: Running;

beforeAll(async () => {
  server = await start({ verifier: { checks: 'syntax' } });
});

afterAll(() => server?.close());

describe('docs/troubleshooting.md, 401 Unauthorized', () => {
  it('lists the detail of every refusal of the credentials, word for word', async () => {
    const refusals = [
      null, // no Authorization header
      basic(ROOT, 'not the password'),
      'Bearer not-a-token',
      'Digest username="root"',
      `Basic ${Buffer.from('no colon here').toString('base64')}`,
    ];
    const details = new Set<string>();
    for (const auth of refusals) {
      const answer = await server.call('GET', '/v2.7/email-validations', { auth });
      expect(answer.status, String(auth)).toBe(401);
      details.add(answer.body.detail as string);
    }
    const listed = detailsUnder('401 Unauthorized');
    for (const detail of details) expect(listed, 'a detail the server gives').toContain(detail);
  });
});

describe('docs/accounts.md, CORS', () => {
  it('names every method a preflight allows', async () => {
    const response = await fetch(`${server.origin}/v2.7/email-validations`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'PUT' },
    });
    expect(response.status).toBe(204);
    const allowed = response.headers.get('access-control-allow-methods')!.split(',').map((method) => method.trim());
    const stated = /allowing every method of the\s+interface \(`([A-Z, ]+)`\)/u.exec(ACCOUNTS)?.[1]?.split(', ');
    expect(stated).toEqual(allowed);
  });
});

describe('docs/verification.md, the stage numbers', () => {
  const text = readFileSync(join(root, 'docs', 'verification.md'), 'utf8');
  const pipeline = text.slice(text.indexOf('## The pipeline'), text.indexOf('\n## ', text.indexOf('## The pipeline') + 3));
  /** The number of the stage whose bold name begins with `name`. */
  const stage = (name: string): number => {
    const match = new RegExp(`^(\\d+)\\. \\*\\*${name}`, 'm').exec(pipeline);
    if (match === null) throw new Error(`no stage ${name}`);
    return Number(match[1]);
  };

  it('are those of the code: the offline stages end with the lists, the network ones are DNS, exchangers, SMTP', () => {
    // src/engine/stages.ts numbers them too: "the offline stages (2 to 5) ... the network stages (6, 7, 8)".
    const code = readFileSync(join(root, 'packages', 'mailverify', 'src', 'engine', 'stages.ts'), 'utf8');
    const offline = /offline\s+\*?\s*stages \((\d+) to (\d+)\)/.exec(code.replace(/\n \*/g, ' '))!;
    const network = /network stages \((\d+), (\d+), (\d+)\)/.exec(code.replace(/\n \*/g, ' '))!;
    expect([stage('Syntax') + 1, stage('Disposable and relay lists')]).toEqual([Number(offline[1]), Number(offline[2])]);
    expect([stage('DNS'), stage('Mail exchanger host names'), stage('SMTP')]).toEqual(network.slice(1).map(Number));
  });

  it('of each checks level and of a batch\'s offline stages are the pipeline\'s', () => {
    const levels = Object.fromEntries([...text.matchAll(/^\| `'(\w+)'`(?: \(default\))? \| (\d+)–(\d+) \|/gm)].map((m) => [m[1]!, [Number(m[2]), Number(m[3])]]));
    expect(levels).toEqual({
      syntax: [1, stage('Disposable and relay lists')],
      dns: [1, stage('Mail exchanger host names')],
      smtp: [1, stage('SMTP')],
    });
    const offline = [...text.matchAll(/offline stages \((\d+)–(\d+)\)/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(offline.length).toBeGreaterThan(0);
    for (const range of offline) expect(range).toEqual([1, stage('Disposable and relay lists')]);
  });
});

describe('docs/server.md, file import', () => {
  it('a sheet is chosen by index, as the guide says: a name is refused', async () => {
    const guide = readFileSync(join(root, 'docs', 'server.md'), 'utf8');
    expect(guide).toMatch(/\| `sheet` \| a workbook's worksheet, by \*\*zero-based index\*\* \(a name is a 400\)/);
    const form = new FormData();
    form.append('inputFile', new Blob(['email\njane@example.com\n'], { type: 'text/csv' }), 'list.csv');
    form.append('settings', JSON.stringify({ sheet: 'Sheet1' }));
    const response = await fetch(`${server.origin}/v2.7/email-validations`, { method: 'POST', body: form, headers: { authorization: ROOT_AUTH } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { detail: string }).detail).toBe('settings.sheet: must be a zero-based integer');
  });

  it('a CSV file\'s header row is an entry unless startingRow is 1, as the guide says', async () => {
    const guide = readFileSync(join(root, 'docs', 'server.md'), 'utf8');
    expect(guide).toContain("A CSV or TSV file's header row is an entry like any other unless `startingRow: 1` skips it.");
    const counts: number[] = [];
    for (const settings of [{}, { startingRow: 1 }]) {
      const form = new FormData();
      form.append('inputFile', new Blob(['email\njane@example.com\ninfo@example.com\n'], { type: 'text/csv' }), 'list.csv');
      form.append('settings', JSON.stringify(settings));
      const response = await fetch(`${server.origin}/v2.7/email-validations?waitTime=10000`, { method: 'POST', body: form, headers: { authorization: ROOT_AUTH } });
      counts.push(((await response.json()) as { overview: { noOfEntries: number } }).overview.noOfEntries);
    }
    expect(counts).toEqual([3, 2]);
  });
});
