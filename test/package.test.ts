// The built package as a consumer sees it: `npm test` builds dist/ first; a temporary consumer package links to this
// one and loads it through the exports map, once with import and once with require.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
let consumer: string;

beforeAll(() => {
  consumer = mkdtempSync(join(tmpdir(), 'mailverify-consumer-'));
  mkdirSync(join(consumer, 'node_modules'));
  symlinkSync(root, join(consumer, 'node_modules', 'mailverify'), 'dir');
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
});

afterAll(() => {
  rmSync(consumer, { recursive: true, force: true });
});

function run(file: string, source: string): unknown {
  writeFileSync(join(consumer, file), source);
  return JSON.parse(execFileSync(process.execPath, [file], { cwd: consumer, encoding: 'utf8' }));
}

const PROBE = `
  const r = parseAddress('(c) Joe@Bücher.DE');
  const bad = parseAddress('test@iana.org.');
  console.log(JSON.stringify({ r, bad, classification: classificationOf('Success'), n: STATUS_CODES.length }));
`;
const EXPECTED = {
  r: {
    ok: true,
    emailAddress: 'Joe@Bücher.DE',
    localPart: 'Joe',
    domainPart: 'Bücher.DE',
    asciiDomainPart: 'xn--bcher-kva.de',
    hasInternationalMailboxName: false,
    hasInternationalDomainName: true,
  },
  bad: { ok: false, status: 'DomainPartCompliancyFailure', syntaxFailureIndex: 14 },
  classification: 'Deliverable',
  n: 44,
};

describe('the published package', () => {
  it('loads with import from an ES module consumer', () => {
    expect(run('esm.mjs', `import { parseAddress, classificationOf, STATUS_CODES } from 'mailverify';\n${PROBE}`)).toEqual(EXPECTED);
  });

  it('loads with require from a CommonJS consumer', () => {
    expect(run('cjs.cjs', `const { parseAddress, classificationOf, STATUS_CODES } = require('mailverify');\n${PROBE}`)).toEqual(EXPECTED);
  });

  it('ships type declarations for both module systems and the CLI', () => {
    const listing = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
    const files = (JSON.parse(listing) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
    for (const file of ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'dist/cli.js', 'package.json', 'README.md']) {
      expect(files).toContain(file);
    }
  });
});
