/**
 * The packages' names mapped to their sources, for the tests and benchmarks (tsconfig.json's paths say the same to
 * the type checker): code under test imports `mailverify/internal` as the server package does, and gets the same
 * modules as the tests' own relative imports.
 */
import { fileURLToPath } from 'node:url';

const source = (path: string): string => fileURLToPath(new URL(`../packages/${path}`, import.meta.url));

// Longest names first: an alias matches by prefix.
export const SOURCE_ALIASES = [
  { find: /^mailverify\/internal$/, replacement: source('mailverify/src/internal.ts') },
  { find: /^mailverify-server\/cli$/, replacement: source('server/src/cli/commands.ts') },
  { find: /^mailverify-server$/, replacement: source('server/src/index.ts') },
  { find: /^mailverify$/, replacement: source('mailverify/src/index.ts') },
];
