/**
 * mailverify-server: the verification service over REST (the 2.x interface of the service it reproduces), as a
 * Fastify plugin, a standalone server, or a `(req, res)` handler; jobs kept in a store (SQLite by default).
 */
export { mailverify, createServer, createRequestHandler } from './server/app.js';
export type { ServerOptions, StandaloneOptions } from './server/app.js';
export { openSqliteStore } from './jobs/sqlite-store.js';
export type { SqliteStoreOptions } from './jobs/sqlite-store.js';
export { openPostgresStore } from './jobs/postgres-store.js';
export type { PostgresStoreOptions } from './jobs/postgres-store.js';
export { StorageFullError } from './jobs/types.js';
export type {
  JobStore,
  JobRecord,
  NewJob,
  JobInput,
  JobStatus,
  JobInterface,
  CallbackSettings,
  CallbackEvent,
  CallbackDelivery,
  EntryFilter,
  EntryPageQuery,
  JobListQuery,
  Page,
  PendingInput,
  JobTotals,
  ServiceStore,
} from './jobs/types.js';
export type { Clock, ClockTimer } from './jobs/clock.js';
export { MemoryRateLimitStore } from './server/rate-limits.js';
export type { RateLimitOptions, RateLimitStore, Bucket } from './server/rate-limits.js';
export { RedisRateLimitStore } from './server/redis-rate-limits.js';
export type { RedisRateLimitStoreOptions } from './server/redis-rate-limits.js';
export { closeRedis, openRedis } from './cluster/redis.js';
export type { Redis, RedisCounterOptions } from './cluster/redis.js';
export { redisSharedCounters } from './server/shared-counters.js';
export type { SharedCounters } from './server/shared-counters.js';
export { RedisCaptchaTokens, RedisFirstFactorAttempts, RedisSignInLimits, RedisThrottle, RedisTotpSteps } from './accounts/redis-counters.js';
