import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The cluster suite needs PostgreSQL and Redis: `npm run test:cluster`.
    exclude: [...configDefaults.exclude, 'test/cluster/**'],
    testTimeout: 30_000,
  },
});
