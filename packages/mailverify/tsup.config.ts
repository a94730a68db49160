import { defineConfig } from 'tsup';
import { COMMON } from '../../build/tsup.js';

// One build per format, each split into shared chunks, so that the public entry (index), the server package's entry
// (internal), the command (cli) and the command's offline worker thread share one copy of every module: one
// SmtpTransportError class, one cache, and no second copy of the engine on disk. No source maps: they would be most of
// the installed size of a package that is kept small.
const ENGINE = { ...COMMON, sourcemap: false, splitting: true };

export default defineConfig([
  {
    ...ENGINE,
    entry: { index: 'src/index.ts', internal: 'src/internal.ts', cli: 'src/cli/main.ts', 'offline-worker': 'src/cli/offline/worker.ts' },
    format: ['esm'],
    dts: { entry: { index: 'src/index.ts', internal: 'src/internal.ts' } },
    clean: true,
  },
  {
    // The worker thread is started from a file next to the module that starts it: in both formats.
    ...ENGINE,
    entry: { index: 'src/index.ts', internal: 'src/internal.ts', 'offline-worker': 'src/cli/offline/worker.ts' },
    format: ['cjs'],
    dts: { entry: { index: 'src/index.ts', internal: 'src/internal.ts' } },
  },
]);
