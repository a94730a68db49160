// The fenced code blocks of the README and docs/, for the tests that run or type-check their examples.
//
// A block that is not run says so right before its fence, visibly in the source and with its reason:
//   <!-- example: not run: REASON -->
// The tests run every ts/js block and every sh/bash/console block that carries no such marker, and fail on a marked
// block that the inventory of test/docs/examples.test.ts does not list. A block marked `<!-- container-test: NAME -->`
// (docs/deployment.md, "Container") is run by the container test, which needs Docker, instead.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

export interface Block {
  readonly lang: string;
  /** 1-based line of the block's first code line in its file. */
  readonly line: number;
  readonly code: string;
  readonly skipReason: string | null;
  /** The document, relative to the repository (`README.md`, `docs/server.md`); '' for a block made in a test. */
  readonly file?: string;
}

export const PROGRAM_LANGS = ['ts', 'js', 'typescript', 'javascript'];
export const SHELL_LANGS = ['sh', 'bash', 'console', 'shell'];

/** The marker of a block that is not run, with its reason. */
const NOT_RUN = /^<!--\s*example:\s*not run:\s*(.+?)\s*-->$/;
/** The marker of a block that the container test (.ci/container-test.mjs, run by .ci/run) runs instead, by its name. */
const CONTAINER_TEST = /^<!--\s*container-test:\s*([\w-]+)\s*-->$/;
/** The skip reason of a block the container test runs. */
export const RUN_BY_CONTAINER_TEST = 'run by .ci/container-test.mjs';

/** The fenced code blocks of a Markdown text. */
export function codeBlocks(markdown: string, file = ''): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```(\w*)\s*$/.exec(lines[i]!);
    if (open === null) continue;
    const indent = /^\s*/.exec(lines[i]!)![0];
    let previous = i - 1;
    while (previous >= 0 && lines[previous]!.trim() === '') previous--;
    const mark = previous >= 0 ? lines[previous]!.trim() : '';
    const container = CONTAINER_TEST.exec(mark);
    const skip = container !== null ? [mark, `${RUN_BY_CONTAINER_TEST} (${container[1]})`] : NOT_RUN.exec(mark);
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++;
    const code = lines
      .slice(start, end)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join('\n');
    blocks.push({ lang: open[1]!, line: start + 1, code, skipReason: skip?.[1] ?? null, file });
    i = end;
  }
  return blocks;
}

export const ROOT = join(new URL('../..', import.meta.url).pathname);

/** The documents whose examples are tested: the README and every Markdown file of docs/. */
export function documents(root = ROOT): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
}

/** Every code block of every document, each with its file. */
export function allBlocks(root = ROOT): Block[] {
  return documents(root).flatMap((file) => codeBlocks(readFileSync(join(root, file), 'utf8'), file));
}

/**
 * Type-checks example files against the package's declarations, as a user's strict TypeScript would (the package
 * resolved through `node_modules/mailverify` of their folder): one line per problem, `where` naming the example.
 */
export function typeProblems(root: string, files: readonly { readonly file: string; readonly where: string }[]): string[] {
  const program = ts.createProgram(
    files.map((f) => f.file),
    {
      noEmit: true,
      strict: true,
      allowJs: true,
      checkJs: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      types: ['node'],
      typeRoots: [join(root, 'node_modules', '@types')],
      skipLibCheck: true,
    },
  );
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = files.find((f) => f.file === d.file?.fileName)?.where ?? d.file?.fileName ?? '';
    const at = d.file !== undefined && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : 0;
    return `${where}${at > 0 ? ` +${at}` : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

/** A shell command of a block: its text (continuation lines joined, comments kept apart) and the line it starts on. */
export interface ShellCommand {
  readonly text: string;
  readonly line: number;
  /** The comment lines right after the command (the output it shows, or the status it expects). */
  readonly after: readonly string[];
}

/**
 * The commands of a shell block: a command goes on over a trailing backslash and over line breaks inside quotes;
 * `#` starts a comment outside quotes; a `console` block's commands are its `$ ` lines (the rest is output).
 */
export function shellCommands(block: Block): ShellCommand[] {
  const lines = block.code.split('\n');
  const commands: { text: string; line: number; after: string[] }[] = [];
  let current: { text: string; line: number; after: string[] } | null = null;
  let quote: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    if (current === null) {
      const trimmed = line.trim();
      if (block.lang === 'console') {
        if (!trimmed.startsWith('$ ')) {
          if (commands.length > 0 && trimmed !== '') commands[commands.length - 1]!.after.push(trimmed);
          continue;
        }
        line = trimmed.slice(2);
      } else if (trimmed === '' || trimmed.startsWith('#')) {
        if (commands.length > 0 && trimmed.startsWith('#')) {
          // Comments right after a command (no blank line between) belong to it.
          if (lines[i - 1]!.trim() !== '') commands[commands.length - 1]!.after.push(trimmed);
        }
        continue;
      }
      current = { text: '', line: block.line + i, after: [] };
    }
    // Scan the line for quotes and a comment.
    let code = '';
    for (let j = 0; j < line.length; j++) {
      const ch = line[j]!;
      if (quote === null && ch === '#' && (j === 0 || /\s/.test(line[j - 1]!))) break;
      if (quote === null && (ch === "'" || ch === '"')) quote = ch;
      else if (quote === ch) quote = null;
      else if (ch === '\\' && quote !== "'" && j + 1 < line.length) {
        code += ch + line[++j]!;
        continue;
      }
      code += ch;
    }
    const continued = quote !== null || /(\\|\||&&)\s*$/.test(code);
    current.text += (current.text === '' ? '' : '\n') + code.replace(/\s+$/, '');
    if (!continued) {
      // A here-document: its lines, up to the terminator, belong to the command.
      const heredoc = /<<-?\s*'?"?(\w+)'?"?/.exec(code);
      if (heredoc !== null) {
        while (++i < lines.length) {
          current.text += '\n' + lines[i]!;
          if (lines[i]!.trim() === heredoc[1]) break;
        }
      }
      commands.push(current);
      current = null;
    }
  }
  if (current !== null) commands.push(current);
  return commands.map((c) => ({ text: c.text, line: c.line, after: c.after }));
}
