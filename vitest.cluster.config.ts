import { defineConfig } from 'vitest/config';
import { SOURCE_ALIASES } from './build/source-aliases.js';

/** The server suites that also run against a cluster (test/server/target.ts): two API servers, two workers. */
const SERVER_SUITES_ON_CLUSTER = [
  'test/server/server.test.ts',
  'test/server/accounts-client.test.ts',
  'test/server/import.test.ts',
  'test/server/lifecycle.test.ts',
  'test/server/export.test.ts',
];

// The cluster suite: tests that need PostgreSQL and Redis (`npm run test:cluster`; URLs from the environment, see
// test/cluster/postgres.ts), and the server suites above with a cluster as the server under test.
export default defineConfig({
  resolve: { alias: SOURCE_ALIASES },
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'cluster', include: ['test/cluster/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'server-on-cluster',
          include: SERVER_SUITES_ON_CLUSTER,
          env: { MAILVERIFY_TEST_TARGET: 'cluster' },
          // After the cluster suite, two files at a time: each test cluster holds some fifteen PostgreSQL connections,
          // and the server allows 100.
          sequence: { groupOrder: 1 },
          maxWorkers: 2,
        },
      },
    ],
  },
});
