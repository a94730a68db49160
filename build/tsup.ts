/** The tsup options both packages build with (packages/\*\/tsup.config.ts). */
import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';

/** The shim that gives the CommonJS build an `import.meta.url` (esbuild leaves it empty in CommonJS output). */
const importMetaUrlShim = fileURLToPath(new URL('./import-meta-url.js', import.meta.url));

/** esbuild options: the CommonJS output reads `import.meta.url` from the shim. */
const withImportMetaUrlInCjs: Options['esbuildOptions'] = (options, { format }) => {
  if (format !== 'cjs') return;
  options.define = { ...options.define, 'import.meta.url': 'importMetaUrl' };
  options.inject = [...(options.inject ?? []), importMetaUrlShim];
};

/** What every build shares: Node.js 20, source maps, the CommonJS shim. */
export const COMMON: Options = {
  sourcemap: true,
  target: 'node20',
  esbuildOptions: withImportMetaUrlInCjs,
  // The packages' own tsconfig: no paths to the other package's sources, so `mailverify` stays an import of the
  // installed package (its dist) and is never bundled into the server's files.
  tsconfig: 'tsconfig.build.json',
};
