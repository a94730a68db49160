// The ts/js examples of the README and docs/, type-checked and run against the built package (`npm test` builds dist/
// first), so that they cannot drift.
//
// - Every ```ts / ```js block is a program of its own. A block right after `<!-- example: not run: REASON -->` is
//   skipped (examples.test.ts lists those).
// - A `// → VALUE` comment asserts the value of the expression before it: on the same line
//   (`f(x);   // → 'a'`), or on the line after a one-line statement. VALUE is a JavaScript expression that may go on
//   over further `//` lines until its brackets close; `//` comments inside it are notes. The string '…' stands for
//   any string (a timestamp). Objects must have the same keys; an `undefined` in an array stands for a hole or
//   undefined.
// - Blocks run in a child process from a temporary consumer package whose `node_modules/mailverify` links to this
//   project, so `import 'mailverify'` resolves through the package's exports map, as a user's would.
// - Every `createVerifier(...)` gets the loopback mail lab's settings first (its DNS server, its SMTP port, short
//   timeouts, loopback allowed); the example's own options are laid over them. Nothing reaches the network.
// - Shell blocks are run by shell-examples.test.ts.
import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { allBlocks, PROGRAM_LANGS, typeProblems, type Block } from './code-blocks.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const LIBRARY = readFileSync(join(root, 'docs', 'library.md'), 'utf8');

/** `line` without a `//` comment that starts outside quotes, and the comment's text (null when there is none). */
function splitComment(line: string): { code: string; comment: string | null } {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote !== null) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"' || ch === '`') {
      quote = ch;
    } else if (ch === '/' && line[i + 1] === '/') {
      return { code: line.slice(0, i), comment: line.slice(i + 2) };
    }
  }
  return { code: line, comment: null };
}

/** Open brackets minus closed ones, outside quotes. */
function depth(text: string): number {
  let level = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote !== null) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    else if ('([{'.includes(ch)) level++;
    else if (')]}'.includes(ch)) level--;
  }
  return level;
}

/**
 * The block as a program: each asserted expression becomes `__check(line, await (expression), (value))`, every
 * `createVerifier(` gets the lab's options first, and the helpers are appended (function declarations are hoisted).
 */
export function instrument(block: Block): { source: string; checks: number } {
  const lines = block.code.split('\n');
  let checks = 0;
  let lastCode = -1;
  for (let i = 0; i < lines.length; i++) {
    const { code, comment } = splitComment(lines[i]!);
    if (comment === null || !comment.trimStart().startsWith('→')) {
      if (code.trim() !== '') lastCode = i;
      continue;
    }
    // The value: after the arrow, then further comment lines until its brackets close.
    let value = splitComment(comment.trimStart().slice(1)).code;
    let j = i;
    while (depth(value) > 0 && j + 1 < lines.length && lines[j + 1]!.trimStart().startsWith('//')) {
      j++;
      value += '\n' + splitComment(lines[j]!.trimStart().slice(2)).code;
    }
    if (depth(value) !== 0) throw new Error(`${block.file}:${block.line + i}: the value after → does not close its brackets`);
    const target = code.trim() !== '' ? i : lastCode;
    if (target < 0) throw new Error(`${block.file}:${block.line + i}: a → with no expression before it`);
    const expression = splitComment(lines[target]!).code.trim().replace(/;$/, '');
    if (expression === '' || depth(expression) !== 0 || /^(const|let|var|for|if|import|export)\b/.test(expression)) {
      throw new Error(`${block.file}:${block.line + target}: a → must follow a one-line expression statement`);
    }
    const indent = /^\s*/.exec(lines[target]!)![0];
    lines[target] = `${indent}__check(${JSON.stringify(`${block.file}:${block.line + target}`)}, await (${expression}), (${value.trim().replace(/,\s*$/, '')}));`;
    checks++;
    lastCode = -1;
    i = j;
  }
  const body = lines
    .join('\n')
    .replace(/\bcreateVerifier\(\s*\)/g, 'createVerifier(__lab())')
    .replace(/\bcreateVerifier\(\s*\{/g, 'createVerifier({ ...__lab(),');
  return { source: `${body}\n${HELPERS}`, checks };
}

const HELPERS = `
function __lab() {
  return JSON.parse(process.env.MAILVERIFY_EXAMPLES_LAB);
}
function __matches(actual, expected) {
  if (expected === '…') return typeof actual === 'string';
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => __matches(actual[i], e));
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    const keys = Object.keys(expected);
    const actualKeys = Object.keys(actual).filter((k) => actual[k] !== undefined);
    return actualKeys.length === keys.length && keys.every((k) => __matches(actual[k], expected[k]));
  }
  return Object.is(actual, expected);
}
function __check(line, actual, expected) {
  if (!__matches(actual, expected)) {
    const show = (value) => __inspect(value, { depth: 5, breakLength: Infinity });
    throw new Error(line + ': the example gives ' + show(actual) + ', the text says ' + show(expected));
  }
}
`;

/** TypeScript to an ES module: types removed, nothing else changed; the helpers' one import added. */
function transpile(source: string): string {
  return ts.transpileModule(`import { inspect as __inspect } from 'node:util';\n${source}`, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
}

function run(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [file, ...args], { cwd, env, timeout: 60_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

const programs = allBlocks().filter((b) => PROGRAM_LANGS.includes(b.lang));

let lab: MailLab;
let consumer: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  lab = await startMailLab({
    servers: { strict: { mailboxes: ['jane', 'info'] } },
    domains: { 'example.com': ['strict'] },
  });
  consumer = mkdtempSync(join(tmpdir(), 'mailverify-readme-'));
  mkdirSync(join(consumer, 'node_modules'));
  symlinkSync(join(root, 'packages', 'mailverify'), join(consumer, 'node_modules', 'mailverify'), 'dir');
  symlinkSync(join(root, 'packages', 'server'), join(consumer, 'node_modules', 'mailverify-server'), 'dir');
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'readme-examples', private: true, type: 'module' }));
  writeFileSync(join(consumer, 'list.txt'), 'jane@example.com\nJane@Example.com\nno-at-sign\ninfo@gmial.com\n');
  writeFileSync(join(consumer, 'list.jsonl'), '"jane@example.com"\n{"inputData":"info@example.com","custom":"row 2"}\n');
  writeFileSync(join(consumer, 'people.csv'), 'name,company,email\nJane Doe,Example,jane@example.com\nJohn Roe,Example,john..roe@example.com\n');
  writeFileSync(join(consumer, 'export.txt'), 'id\tname\temail\n1\tJane Doe\tjane@example.com\n2\tJohn Roe\tjohn@example\n');
  const labOptions = {
    heloName: 'probe.mailverify-lab.com',
    mailFrom: 'bounce@mailverify-lab.com',
    allowPrivateAddresses: true,
    dns: { servers: [lab.dnsAddress], timeoutMs: 1000 },
    smtp: { port: lab.port, connectTimeoutMs: 1500, commandTimeoutMs: 1500 },
  };
  env = { ...process.env, MAILVERIFY_EXAMPLES_LAB: JSON.stringify(labOptions) };
});

afterAll(async () => {
  await lab?.close();
  if (consumer !== undefined) rmSync(consumer, { recursive: true, force: true });
});

describe('the ts and js examples of the README and docs/', () => {
  it('are found, and skipped only with a reason', () => {
    expect(programs.length).toBeGreaterThanOrEqual(20);
    for (const block of programs.filter((b) => b.skipReason !== null)) expect(block.skipReason!.length).toBeGreaterThan(3);
    // The examples assert what they print: most results shown are checked.
    const checks = programs.filter((b) => b.skipReason === null).reduce((sum, b) => sum + instrument(b).checks, 0);
    expect(checks).toBeGreaterThanOrEqual(15);
  });

  for (const block of programs) {
    const title = `the ${block.lang} example at ${block.file}:${block.line} runs${block.skipReason === null ? '' : ` (not run: ${block.skipReason})`}`;
    if (block.skipReason !== null) continue;
    it(title, async () => {
      const file = `example-${block.file!.replace(/\W/g, '-')}-${block.line}.mjs`;
      writeFileSync(join(consumer, file), transpile(instrument(block).source));
      const { code, stderr } = await run(file, [], consumer, env);
      expect(code, stderr).toBe(0);
    });
  }

  it('type-check against the package\'s declarations', () => {
    const files = programs
      .filter((b) => b.skipReason === null)
      .map((b) => {
        const file = join(consumer, `typed-${b.file!.replace(/\W/g, '-')}-${b.line}.${b.lang.startsWith('j') ? 'js' : 'ts'}`);
        // Each file a module of its own (`export {}`), so that the examples' names do not clash.
        writeFileSync(file, `${b.code}\nexport {};\n`);
        return { file, where: `${b.file}:${b.line}` };
      });
    const problems = typeProblems(root, files);
    expect(problems).toEqual([]);
  });
});

describe('the harness itself', () => {
  const block = (code: string): Block => ({ lang: 'ts', line: 10, code, skipReason: null, file: 'README.md' });

  it('turns a → comment into a check of the expression before it', () => {
    const { source, checks } = instrument(block("f('a');   // → { a: 1 } // a note\ng();\n// → [1,\n//   2]"));
    expect(checks).toBe(2);
    expect(source).toContain('__check("README.md:10", await (f(\'a\')), ({ a: 1 }));');
    expect(source).toContain('__check("README.md:11", await (g()), ([1,\n   2]));');
  });

  it('refuses a → after something that is not a one-line expression', () => {
    expect(() => instrument(block("const x = 1;\n// → 1"))).toThrow(/one-line expression/);
    expect(() => instrument(block('f(); // → { a: 1'))).toThrow(/brackets/);
  });

  it('lays the lab options under every createVerifier call', () => {
    const { source } = instrument(block("createVerifier({ checks: 'dns' });\ncreateVerifier();"));
    expect(source).toContain("createVerifier({ ...__lab(), checks: 'dns' })");
    expect(source).toContain('createVerifier(__lab())');
  });

  it('finds a failing example', async () => {
    const file = 'example-failing.mjs';
    writeFileSync(join(consumer, file), transpile(instrument(block("import { classificationOf } from 'mailverify';\nclassificationOf('Success');   // → 'Risky'")).source));
    const { code, stderr } = await run(file, [], consumer, env);
    expect(code).not.toBe(0);
    expect(stderr).toContain("README.md:11: the example gives 'Deliverable', the text says 'Risky'");
  });
});

describe('the list of exports in docs/library.md', () => {
  it('names every value the package exports, and nothing it does not', async () => {
    const section = LIBRARY.slice(LIBRARY.indexOf('Everything the package exports:'), LIBRARY.indexOf('- types:', LIBRARY.indexOf('Everything the package exports:')));
    const listed = [...section.matchAll(/`([A-Za-z_]+)`/g)].map((m) => m[1]!).sort();
    const exported = Object.keys(await import('../../packages/mailverify/src/index.js')).sort();
    expect(listed).toEqual(exported);
  });
});
