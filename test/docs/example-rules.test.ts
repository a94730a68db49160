// Rules for the examples of the README and docs/, read from the text: a placeholder is a shell variable that the text
// sets before it is used, a variable that may hold spaces is quoted, there are no `<id>`-style placeholders, and the
// domains of override rules and list entries are ones an address can have (a reserved top-level name such as
// `.example` is refused before overrides and lists are read, so a rule for it never matches).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allBlocks, documents, PROGRAM_LANGS, ROOT, SHELL_LANGS, shellCommands, type Block } from './code-blocks.js';

const blocks = allBlocks();
const shellBlocks = blocks.filter((b) => SHELL_LANGS.includes(b.lang));

/** `$NAME` / `${NAME}` uses of a command, with whether each is inside double quotes; single-quoted text is literal. */
export function variableUses(text: string): { name: string; quoted: boolean }[] {
  const uses: { name: string; quoted: boolean }[] = [];
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote === "'") {
      if (ch === "'") quote = null;
      continue;
    }
    if (ch === '\\') {
      i++;
      continue;
    }
    if (quote === null && (ch === "'" || ch === '"')) {
      quote = ch;
      continue;
    }
    if (quote === '"' && ch === '"') {
      quote = null;
      continue;
    }
    if (ch !== '$') continue;
    const match = /^\$(?:\{([A-Za-z_]\w*)[^}]*\}|([A-Za-z_]\w*))/.exec(text.slice(i));
    if (match !== null) uses.push({ name: (match[1] ?? match[2])!, quoted: quote === '"' });
  }
  return uses;
}

/** The variables a command sets for the commands after it (`NAME=`, `export NAME=`, `read NAME`, `for NAME in`). */
export function assignments(text: string): string[] {
  const names: string[] = [];
  // NAME=$(command …), over as many lines as the command takes.
  const captured = /^([A-Za-z_]\w*)=\$\(/.exec(text.trim());
  if (captured !== null) names.push(captured[1]!);
  for (const part of text.split(/;|&&|\|\||\n/)) {
    const words = part.trim();
    const exported = /^(?:export|readonly|local)\s+(.*)$/s.exec(words);
    if (exported !== null) {
      names.push(...[...exported[1]!.matchAll(/(?:^|\s)([A-Za-z_]\w*)=/g)].map((m) => m[1]!));
      continue;
    }
    const read = /^read\s+(?:-\w+\s+)*([A-Za-z_]\w*)/.exec(words);
    if (read !== null) names.push(read[1]!);
    const loop = /^for\s+([A-Za-z_]\w*)\s+in\b/.exec(words);
    if (loop !== null) names.push(loop[1]!);
    // NAME=value alone is an assignment; NAME=value command sets NAME for that command only.
    const plain = /^((?:[A-Za-z_]\w*=(?:'[^']*'|"(?:[^"\\]|\\.)*"|\$\([^)]*\)|\S)*\s*)+)$/s.exec(words);
    if (plain !== null) names.push(...[...plain[1]!.matchAll(/(?:^|\s)([A-Za-z_]\w*)=/g)].map((m) => m[1]!));
  }
  return names;
}

/** Variables any shell has, which an example may use without setting them. */
const SHELL_VARIABLES = new Set(['HOME', 'PATH', 'PWD', 'USER', 'i']);

describe('shell examples', () => {
  it('are found', () => {
    expect(shellBlocks.length).toBeGreaterThanOrEqual(20);
  });

  it('quote every variable, which may hold spaces', () => {
    const unquoted = shellBlocks.flatMap((block) =>
      shellCommands(block).flatMap((command) =>
        variableUses(command.text)
          .filter((use) => !use.quoted)
          .map((use) => `${block.file}:${command.line}: $${use.name} unquoted in: ${command.text.split('\n')[0]}`),
      ),
    );
    expect(unquoted).toEqual([]);
  });

  it('set every variable they use first, in the same document', () => {
    const unset: string[] = [];
    for (const file of documents()) {
      const set = new Set(SHELL_VARIABLES);
      for (const block of shellBlocks.filter((b) => b.file === file)) {
        for (const command of shellCommands(block)) {
          for (const { name } of variableUses(command.text)) {
            if (!set.has(name)) unset.push(`${file}:${command.line}: $${name} is used before the text sets it`);
          }
          for (const name of assignments(command.text)) set.add(name);
        }
      }
    }
    expect(unset).toEqual([]);
  });

  it('have no <placeholder> and no ... standing for a value', () => {
    const placeholders = shellBlocks.flatMap((block) =>
      shellCommands(block).flatMap((command) => {
        const found = [...command.text.matchAll(/<[a-z][\w-]*>|=\.\.\.(?=\s|$)|\{id\}/gi)].map((m) => m[0]);
        return found.map((p) => `${block.file}:${command.line}: ${p} in: ${command.text.split('\n')[0]}`);
      }),
    );
    const programs = blocks
      .filter((b) => PROGRAM_LANGS.includes(b.lang))
      .flatMap((block) => [...block.code.matchAll(/(['"`])<[a-z][\w-]*>\1/gi)].map((m) => `${block.file}:${block.line}: ${m[0]}`));
    expect([...placeholders, ...programs]).toEqual([]);
  });
});

/** The domains that override patterns and list entries of the examples name, without their wildcards. */
function exampleDomains(block: Block): string[] {
  const domains: string[] = [];
  for (const match of block.code.matchAll(/["']?match["']?\s*:\s*["']([^"']+)["']/g)) {
    const domain = match[1]!.split('@')[1];
    if (domain !== undefined) domains.push(domain);
  }
  for (const list of block.code.matchAll(/(?:disposableDomains|freeProviderDomains|relayDomains|honeypotMailExchangers|disposableMailExchangers|parkedMailExchangers)\s*:\s*(\{[^}]*\}|\[[^\]]*\])/g)) {
    for (const entry of list[1]!.matchAll(/["']([^"']+)["']/g)) domains.push(entry[1]!);
  }
  return domains
    .map((domain) => domain.replace(/^\*\./, 'a.').replace(/[*?]/g, 'a'))
    .filter((domain) => domain !== 'a' && domain.includes('.'));
}

describe('override rules and list entries of the examples', () => {
  it('name domains an address can have (not a reserved top-level name)', async () => {
    const { createVerifier } = await import('../../packages/mailverify/src/index.js');
    const verifier = createVerifier({ checks: 'syntax', suggestions: false });
    const found: string[] = [];
    const refused: string[] = [];
    for (const block of blocks) {
      for (const domain of exampleDomains(block)) {
        found.push(domain);
        const entry = await verifier.verify(`someone@${domain}`);
        if (entry.status === 'DomainDoesNotExist') refused.push(`${block.file}:${block.line}: ${domain} is refused before overrides and lists are read`);
      }
    }
    await verifier.close();
    expect(found.length).toBeGreaterThanOrEqual(5);
    expect(refused).toEqual([]);
  });
});

describe('file import in the examples', () => {
  it('says, wherever a CSV file is imported, that its header row is an entry unless startingRow is 1', () => {
    const missing: string[] = [];
    for (const file of documents()) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      const lines = text.split('\n');
      for (const block of shellBlocks.filter((b) => b.file === file && /inputFile=@[^;'"\s]+\.csv/.test(b.code))) {
        // The block itself, or the paragraph before it.
        let start = block.line - 2;
        while (start > 0 && lines[start - 1]!.trim() !== '') start--;
        const before = lines.slice(Math.max(0, start - 12), block.line - 1).join('\n');
        if (!/startingRow/.test(block.code) && !/header row/.test(before)) missing.push(`${file}:${block.line}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
