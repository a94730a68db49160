import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

/** The shim that gives the CommonJS build an `import.meta.url` (esbuild leaves it empty in CommonJS output). */
const importMetaUrlShim = fileURLToPath(new URL('./build/import-meta-url.js', import.meta.url));

export default defineConfig([
  {
    entry: { index: 'src/index.ts', server: 'src/server/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    esbuildOptions(options, { format }) {
      if (format !== 'cjs') return;
      options.define = { ...options.define, 'import.meta.url': 'importMetaUrl' };
      options.inject = [...(options.inject ?? []), importMetaUrlShim];
    },
  },
  {
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
]);
