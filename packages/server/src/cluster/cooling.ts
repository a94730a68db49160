/**
 * Cooling shared by the processes of a cluster: the state of each egress × provider lives in a Redis hash (until when
 * it cools, how long its next cooling lasts), changed by one Lua script at a time with Redis's clock, and every change
 * is published to every process, which takes it into its own state (packages/mailverify/src/smtp/egress/cooling.ts). So
 * a reply about the prober seen by one worker stops every worker's new connections that way, and the doubling counts
 * them all. The process that got the reply tells its observer at once; the cluster's word follows and corrects it if
 * another process had started that cooling first. A process that starts while a pair cools learns it from its first
 * refusal (the cooling is not extended then, and its end is published).
 */
import { Cooling, FIRST_COOLDOWN_MS, LONGEST_COOLDOWN_MS } from 'mailverify/internal';
import { closeRedis, RedisScript, type Redis } from './redis.js';

/** How long a pair's remembered next cooling outlives its last cooling. */
const MEMORY_MS = 24 * 3_600_000;

// KEYS: the pair's hash, the channel. ARGV: egress, provider, first cooldown, longest, memory.
const START = new RedisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local untilMs = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
local nextMs = tonumber(redis.call('HGET', KEYS[1], 'next') or ARGV[3])
if untilMs <= now then
  untilMs = now + nextMs
  nextMs = math.min(nextMs * 2, tonumber(ARGV[4]))
  redis.call('HSET', KEYS[1], 'until', untilMs, 'next', nextMs)
  redis.call('PEXPIRE', KEYS[1], untilMs - now + tonumber(ARGV[5]))
end
redis.call('PUBLISH', KEYS[2], cjson.encode({ARGV[1], ARGV[2], untilMs - now, nextMs}))
return untilMs - now
`);

// The same KEYS and ARGV: a clean session brings the next cooling back to the first length, unless the pair cools.
const CLEAN = new RedisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local untilMs = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if untilMs > now then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', KEYS[2], cjson.encode({ARGV[1], ARGV[2], 0, tonumber(ARGV[3])}))
return 1
`);

export class SharedCooling extends Cooling {
  private constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly keyPrefix: string,
    private readonly onError: (error: unknown) => void,
  ) {
    super();
  }

  /** `redis` runs the scripts; a connection of its own (a duplicate) listens to the channel. */
  static async open(redis: Redis, keyPrefix: string, onError: (error: unknown) => void = () => {}): Promise<SharedCooling> {
    const subscriber = redis.duplicate();
    subscriber.on('error', () => {});
    const cooling = new SharedCooling(redis, subscriber, keyPrefix, onError);
    subscriber.on('message', (_channel: string, message: string) => cooling.heard(message));
    await subscriber.subscribe(cooling.channel);
    return cooling;
  }

  override start(egress: string, provider: string): ReturnType<Cooling['start']> {
    const started = super.start(egress, provider);
    if (started !== null) this.share(START, egress, provider);
    return started;
  }

  override clean(egress: string, provider: string): boolean {
    // Most sessions end clean on a pair with nothing to forget: only a change is shared.
    const changed = super.clean(egress, provider);
    if (changed) this.share(CLEAN, egress, provider);
    return changed;
  }

  async close(): Promise<void> {
    await closeRedis(this.subscriber);
  }

  private get channel(): string {
    return `${this.keyPrefix}cooling`;
  }

  private share(script: RedisScript, egress: string, provider: string): void {
    const keys = [`${this.keyPrefix}cooling:${egress}:${provider}`, this.channel];
    script.run(this.redis, keys, [egress, provider, FIRST_COOLDOWN_MS, LONGEST_COOLDOWN_MS, MEMORY_MS]).catch(this.onError);
  }

  /** Another process's (or this one's own) change, as published. */
  private heard(message: string): void {
    try {
      const [egress, provider, remainingMs, nextMs] = JSON.parse(message) as [unknown, unknown, unknown, unknown];
      if (typeof egress !== 'string' || typeof provider !== 'string' || typeof remainingMs !== 'number' || typeof nextMs !== 'number') return;
      this.adopt(egress, provider, remainingMs, nextMs);
    } catch {
      // Not one of ours: ignored.
    }
  }
}
