/** The package's version (kept equal to package.json's by a test): the legacy interface's `engineVersion`. */
export const VERSION = '0.1.0';
