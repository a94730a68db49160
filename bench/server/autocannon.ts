/**
 * autocannon (https://www.npmjs.com/package/autocannon) in a process of its own, so that the load it makes does not
 * share an event loop with what it measures: its JSON result.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

export interface AutocannonResult {
  readonly requests: { readonly average: number; readonly total: number };
  readonly latency: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  /** Answers by status code. */
  readonly statusCodeStats: Record<string, { readonly count: number }>;
}

/** Runs autocannon with these command-line arguments (`-j` is added: JSON out). */
export async function autocannon(args: readonly string[]): Promise<AutocannonResult> {
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [AUTOCANNON, '-j', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (text += chunk));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`autocannon: exit ${code}`))));
  });
  return JSON.parse(out) as AutocannonResult;
}
