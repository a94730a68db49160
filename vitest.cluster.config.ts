import { defineConfig } from 'vitest/config';

// The cluster suite: tests that need PostgreSQL and Redis (`npm run test:cluster`; URLs from the environment, see
// test/cluster/postgres.ts).
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
