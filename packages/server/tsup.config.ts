import { defineConfig } from 'tsup';
import { COMMON } from '../../build/tsup.js';

// `mailverify` is a dependency, so tsup leaves its imports (`mailverify/internal`) to the installed package.
export default defineConfig([
  {
    ...COMMON,
    entry: { index: 'src/index.ts', cli: 'src/cli/commands.ts', main: 'src/cli/main.ts' },
    format: ['esm'],
    dts: { entry: { index: 'src/index.ts', cli: 'src/cli/commands.ts' } },
    splitting: true,
    clean: true,
  },
  {
    ...COMMON,
    entry: { index: 'src/index.ts' },
    format: ['cjs'],
    dts: { entry: { index: 'src/index.ts' } },
  },
]);
