// The fenced code blocks of a Markdown file, for the tests that run or type-check the examples of the README and docs/.
import { join } from 'node:path';
import ts from 'typescript';

export interface Block {
  readonly lang: string;
  /** 1-based line of the block's first code line in its file. */
  readonly line: number;
  readonly code: string;
  readonly skipReason: string | null;
}

/** The fenced code blocks of a Markdown text. */
export function codeBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w+)\s*$/.exec(lines[i]!);
    if (open === null) continue;
    let previous = i - 1;
    while (previous >= 0 && lines[previous]!.trim() === '') previous--;
    const skip = previous >= 0 ? /^<!--\s*not run:\s*(.+?)\s*-->$/.exec(lines[previous]!.trim()) : null;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    blocks.push({ lang: open[1]!, line: start + 1, code: lines.slice(start, end).join('\n'), skipReason: skip?.[1] ?? null });
    i = end;
  }
  return blocks;
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
