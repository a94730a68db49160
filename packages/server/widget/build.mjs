// The sign-up form widget: one source built by esbuild into dist/widget/v1.js (a classic script for a <script> tag)
// and dist/widget/v1.mjs (an ES module), which the server serves at <basePath>/widget/, and the module's declarations
// dist/widget/v1.d.ts (the package's `mailverify-server/widget` export) by TypeScript.
import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const common = { bundle: true, minify: true, target: 'es2020', legalComments: 'none', logLevel: 'warning' };

await build({ ...common, entryPoints: [here('./src/script.ts')], format: 'iife', outfile: here('../dist/widget/v1.js') });
await build({ ...common, entryPoints: [here('./src/widget.ts')], format: 'esm', outfile: here('../dist/widget/v1.mjs') });

// The module's declarations: those of widget.ts, which holds every type of its exports.
const { config } = ts.readConfigFile(here('./tsconfig.json'), ts.sys.readFile);
const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, here('.'));
const program = ts.createProgram([here('./src/widget.ts')], { ...options, noEmit: false, declaration: true, emitDeclarationOnly: true });
let declarations;
const result = program.emit(program.getSourceFile(here('./src/widget.ts')), (name, text) => (declarations = text), undefined, true);
const problems = ts.getPreEmitDiagnostics(program).concat(result.diagnostics);
if (problems.length > 0 || declarations === undefined) {
  throw new Error(ts.formatDiagnostics(problems, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => here('.'), getNewLine: () => '\n' }));
}
writeFileSync(here('../dist/widget/v1.d.ts'), declarations);
