// What the README and docs state about the server's answers, checked against a real server: the 401 details that
// docs/troubleshooting.md explains, and the methods the README says a CORS preflight allows.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, ROOT, start, type Running } from '../server/http-client.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const TROUBLESHOOTING = readFileSync(join(root, 'docs', 'troubleshooting.md'), 'utf8');
const README = readFileSync(join(root, 'README.md'), 'utf8');

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

describe('README, CORS', () => {
  it('names every method a preflight allows', async () => {
    const response = await fetch(`${server.origin}/v2.7/email-validations`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'PUT' },
    });
    expect(response.status).toBe(204);
    const allowed = response.headers.get('access-control-allow-methods')!.split(',').map((method) => method.trim());
    const stated = /allowing every method of the\s+interface \(`([A-Z, ]+)`\)/u.exec(README)?.[1]?.split(', ');
    expect(stated).toEqual(allowed);
  });
});
