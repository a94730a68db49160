import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';

/** The shim that gives the CommonJS build an `import.meta.url` (esbuild leaves it empty in CommonJS output). */
const importMetaUrlShim = fileURLToPath(new URL('./build/import-meta-url.js', import.meta.url));

/** esbuild options: the CommonJS output reads `import.meta.url` from the shim. */
const withImportMetaUrlInCjs: Options['esbuildOptions'] = (options, { format }) => {
  if (format !== 'cjs') return;
  options.define = { ...options.define, 'import.meta.url': 'importMetaUrl' };
  options.inject = [...(options.inject ?? []), importMetaUrlShim];
};

export default defineConfig([
  {
    entry: { index: 'src/index.ts', server: 'src/server/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    esbuildOptions: withImportMetaUrlInCjs,
  },
  {
    // The CLI's offline worker thread, started from a file next to the module that starts it: both formats.
    entry: { 'offline-worker': 'src/cli/offline/worker.ts' },
    format: ['esm', 'cjs'],
    sourcemap: true,
    target: 'node20',
    esbuildOptions: withImportMetaUrlInCjs,
  },
  {
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
]);
