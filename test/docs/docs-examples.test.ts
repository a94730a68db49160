// The examples of docs/*.md, against the built package as a user imports it: every ts/js block type-checks against
// the package's declarations, and every block not marked `<!-- not run: REASON -->` runs to its end (they use no
// network: they make verifiers, or verify offline). The README's examples have their own, fuller test (readme.test.ts).
import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks, typeProblems } from './code-blocks.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const DOCS = join(root, 'docs');
const PROGRAM_LANGS = ['ts', 'js', 'typescript', 'javascript'];

const examples = readdirSync(DOCS)
  .filter((name) => name.endsWith('.md'))
  .sort()
  .flatMap((name) => codeBlocks(readFileSync(join(DOCS, name), 'utf8')).filter((b) => PROGRAM_LANGS.includes(b.lang)).map((block) => ({ ...block, where: `docs/${name}:${block.line}` })));

let consumer: string;

beforeAll(() => {
  consumer = mkdtempSync(join(tmpdir(), 'mailverify-docs-'));
  mkdirSync(join(consumer, 'node_modules'));
  symlinkSync(join(root, 'packages', 'mailverify'), join(consumer, 'node_modules', 'mailverify'), 'dir');
  symlinkSync(join(root, 'packages', 'server'), join(consumer, 'node_modules', 'mailverify-server'), 'dir');
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'docs-examples', private: true, type: 'module' }));
});

afterAll(() => {
  if (consumer !== undefined) rmSync(consumer, { recursive: true, force: true });
});

function run(file: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [file], { cwd: consumer, timeout: 30_000, encoding: 'utf8' }, (error, _stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stderr });
    });
  });
}

describe('the examples of docs/', () => {
  it('are found, and left unrun only with a reason', () => {
    expect(examples.length).toBeGreaterThanOrEqual(6);
    for (const block of examples.filter((b) => b.skipReason !== null)) expect(block.skipReason!.length, block.where).toBeGreaterThan(3);
  });

  it("type-check against the package's declarations", () => {
    const files = examples.map((block, n) => {
      const file = join(consumer, `typed-${n}.${block.lang.startsWith('j') ? 'js' : 'ts'}`);
      writeFileSync(file, `${block.code}\nexport {};\n`);
      return { file, where: block.where };
    });
    const problems = typeProblems(root, files);
    expect(problems).toEqual([]);
  });

  for (const [n, block] of examples.entries()) {
    if (block.skipReason !== null) continue;
    it(`the example at ${block.where} runs`, async () => {
      const file = `example-${n}.mjs`;
      const source = ts.transpileModule(block.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
      writeFileSync(join(consumer, file), source);
      const { code, stderr } = await run(file);
      expect(code, stderr).toBe(0);
    });
  }
});
