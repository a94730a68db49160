// The repository's own files: none holds what an unfinished merge leaves behind.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repository = fileURLToPath(new URL('..', import.meta.url));

describe('the tracked files', () => {
  it('hold no merge conflict marker', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: repository, encoding: 'utf8' }).split('\0').filter((file) => file !== '' && file !== 'package-lock.json');
    const marked: string[] = [];
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(join(repository, file), 'utf8');
      } catch {
        continue; // deleted in the work tree
      }
      if (/^(<{7} |={7}$|>{7} )/m.test(text)) marked.push(file);
    }
    expect(marked).toEqual([]);
  });
});
