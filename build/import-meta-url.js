// `import.meta.url` for the CommonJS build (tsup.config.ts puts `importMetaUrl` in its place): the file URL of the
// running .cjs file. pathToFileURL escapes `#`, `?` and `%` in the path, which `new URL('file:' + __filename)` would
// read as a fragment, a query or an escape.
import { pathToFileURL } from 'node:url';

const currentFileUrl = () => pathToFileURL(__filename).href;

// A call marked pure, so that a build that never reads import.meta.url leaves the shim out.
export const importMetaUrl = /* @__PURE__ */ currentFileUrl();
