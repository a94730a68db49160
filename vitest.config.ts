import { configDefaults, defineConfig } from 'vitest/config';
import { SOURCE_ALIASES } from './build/source-aliases.js';

export default defineConfig({
  resolve: { alias: SOURCE_ALIASES },
  test: {
    include: ['test/**/*.test.ts'],
    // The cluster suite needs PostgreSQL and Redis: `npm run test:cluster`.
    exclude: [...configDefaults.exclude, 'test/cluster/**'],
    testTimeout: 30_000,
  },
});
