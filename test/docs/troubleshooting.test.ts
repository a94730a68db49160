// docs/troubleshooting.md says what each 401 answer's `detail` means: the texts it lists are the ones a server gives,
// read from a real server for each way a request can be refused before any permission is checked.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, ROOT, start, type Running } from '../server/http-client.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const TROUBLESHOOTING = readFileSync(join(root, 'docs', 'troubleshooting.md'), 'utf8');

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
