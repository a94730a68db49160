// The shipped code cites RFCs and the project's own documents: every `docs/<file>.md#<anchor>` named in a comment of
// the packages' sources (packages/*/src) exists, every relative link of the README leads to a file (and heading) of the
// repository, and no comment sends the reader to a document outside the repository.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

function anchorsOf(markdownFile: string): Set<string> {
  const text = readFileSync(join(root, markdownFile), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1]!)));
}

const files = ['packages/mailverify/src', 'packages/server/src'].flatMap(sourceFiles);

describe("citations in the packages' sources", () => {
  it('name sections of docs/ that exist', () => {
    const broken: string[] = [];
    let count = 0;
    for (const file of files) {
      for (const match of readFileSync(join(root, file), 'utf8').matchAll(/docs\/([\w-]+\.md)(?:#([\w-]+))?/g)) {
        count++;
        const doc = join('docs', match[1]!);
        if (!existsSync(join(root, doc))) broken.push(`${file}: ${doc} does not exist`);
        else if (match[2] !== undefined && !anchorsOf(doc).has(match[2])) broken.push(`${file}: ${doc} has no #${match[2]}`);
      }
    }
    expect(broken).toEqual([]);
    expect(count).toBeGreaterThan(20);
  });

  it('never send the reader to a document outside the repository', () => {
    const outside = files.flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (/decisions(\.md)?\b|research\/|shared\/|anchors §|service-api\.md(?!`)/.test(line) && !/test\/fixtures\/service-api\.md/.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(outside).toEqual([]);
  });
});

describe('links of the README and of docs/', () => {
  it('lead to files and headings of the repository', () => {
    const documents = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => join('docs', name))];
    const broken: string[] = [];
    let count = 0;
    for (const document of documents) {
      const text = readFileSync(join(root, document), 'utf8');
      for (const match of text.matchAll(/\]\((?!https?:|mailto:)([^)#\s]*)(?:#([^)\s]+))?\)/g)) {
        count++;
        // A link is relative to the folder of the document it is in.
        const target = match[1] === '' ? document : relative(root, join(root, dirname(document), match[1]!));
        if (!existsSync(join(root, target))) broken.push(`${document}: ${target} does not exist`);
        else if (match[2] !== undefined && target.endsWith('.md') && !anchorsOf(target).has(match[2])) {
          broken.push(`${document}: ${target} has no #${match[2]}`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(count).toBeGreaterThan(40);
  });
});

describe('docs/troubleshooting.md', () => {
  it('names statuses of the catalogue only', async () => {
    const { STATUS_CODES } = await import('../../packages/mailverify/src/status/catalogue.js');
    const text = readFileSync(join(root, 'docs/troubleshooting.md'), 'utf8');
    // Status codes are written as `CamelCase` words of two parts or more; classifications are single words.
    const named = new Set([...text.matchAll(/`([A-Z][a-z]+(?:[A-Z][a-z]*)+)`/g)].map((m) => m[1]!));
    expect(named.size).toBeGreaterThanOrEqual(8);
    expect([...named].filter((name) => !(STATUS_CODES as readonly string[]).includes(name))).toEqual([]);
  });
});
