// The fenced code blocks of a Markdown file, for the tests that run or type-check the examples of the README and docs/.

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

