// Fallback when /usr/bin/time is missing: runs `node SCRIPT ARGS...` with this process's stdio and prints
// "<wall seconds> <peak RSS in KB>" of the child on stderr, as `time -f '%e %M'` would.
import { spawnSync } from 'node:child_process';

const started = process.hrtime.bigint();
const child = spawnSync(process.execPath, ['--require', new URL('./max-rss.cjs', import.meta.url).pathname, ...process.argv.slice(2)], {
  stdio: ['inherit', 'inherit', 'pipe'],
  encoding: 'utf8',
});
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const reported = /max-rss (\d+)/.exec(child.stderr ?? '');
process.stderr.write(`${seconds.toFixed(2)} ${reported ? reported[1] : 0}\n`);
process.exit(child.status ?? 1);
