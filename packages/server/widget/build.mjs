// The sign-up form widget: one source built by esbuild into dist/widget/v1.js (a classic script for a <script> tag)
// and dist/widget/v1.mjs (an ES module), which the server serves at <basePath>/widget/.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const common = { bundle: true, minify: true, target: 'es2020', legalComments: 'none', logLevel: 'warning' };

await build({ ...common, entryPoints: [here('./src/script.ts')], format: 'iife', outfile: here('../dist/widget/v1.js') });
await build({ ...common, entryPoints: [here('./src/widget.ts')], format: 'esm', outfile: here('../dist/widget/v1.mjs') });
