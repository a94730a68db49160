// The widget's build (`npm run build` makes it): its two files within the size budget of 10,240 bytes gzipped at
// level 9, and the declarations of the package's `mailverify-server/widget` export, read by a consumer's TypeScript
// through the exports map.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../docs/code-blocks.js';

const WIDGET = join(ROOT, 'packages', 'server', 'dist', 'widget');
const BUDGET = 10_240;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the built widget', () => {
  for (const file of ['v1.js', 'v1.mjs']) {
    it(`${file} is at most ${BUDGET} bytes gzipped (-9)`, () => {
      const source = readFileSync(join(WIDGET, file));
      const size = gzipSync(source, { level: 9 }).length;
      process.stdout.write(`widget ${file}: ${source.length} bytes, ${size} bytes gzipped (-9), budget ${BUDGET}\n`);
      expect(size).toBeLessThanOrEqual(BUDGET);
    });
  }

  it('v1.js is a classic script (no import or export) and v1.mjs exports attach', () => {
    expect(readFileSync(join(WIDGET, 'v1.js'), 'utf8')).not.toMatch(/\bimport\s*[{*(]|\bexport\s*[{*]/);
    expect(readFileSync(join(WIDGET, 'v1.mjs'), 'utf8')).toMatch(/export\s*\{[^}]*\bas attach\b|export\s*\{[^}]*\battach\b/);
  });

  it("mailverify-server/widget has types for attach and its options, read through the package's exports", () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverify-widget-types-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(join(ROOT, 'packages', 'server'), join(dir, 'node_modules', 'mailverify-server'));
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
    const consumer = join(dir, 'form.ts');
    writeFileSync(
      consumer,
      `import { attach, type AttachOptions, type Entry } from 'mailverify-server/widget';
const options: AttachOptions = {
  key: 'KEY',
  endpoint: 'https://verify.example.com',
  block: 'undeliverable',
  captcha: async () => ({ provider: 'Turnstile', token: 'token' }),
  messages: { Undeliverable: 'No mail goes there.' },
};
const input = document.querySelector<HTMLInputElement>('#email')!;
const detach: () => void = attach(input, options);
input.addEventListener('mailverify:result', (event) => {
  const entry = (event as CustomEvent<Entry>).detail;
  const suggestion: string | undefined = entry.suggestions?.[0];
  void [entry.classification, entry.status, suggestion];
});
detach();
// @ts-expect-error the key is required
attach(input, { endpoint: 'https://verify.example.com' });
// @ts-expect-error block takes 'undeliverable' only
attach(input, { key: 'KEY', endpoint: 'https://verify.example.com', block: 'risky' });
`,
    );
    const program = ts.createProgram([consumer], {
      noEmit: true,
      strict: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '));
    expect(problems).toEqual([]);
    expect(program.getSourceFiles().map((file) => file.fileName)).toContain(join(WIDGET, 'v1.d.ts'));
  });
});
