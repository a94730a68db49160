import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests that need PostgreSQL and Redis run in their own suite (vitest.cluster.config.ts).
    exclude: ['**/node_modules/**', 'test/cluster/**'],
    testTimeout: 30_000,
  },
});
