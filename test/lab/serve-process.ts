// `mailverify serve` from the built package in a child process, for tests of the real process: started on a free
// port, resolved once it prints the origin it listens on.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../packages/mailverify/bin/mailverify.js', import.meta.url));

/**
 * Runs `mailverify ARGS` from the build with `stdin` and `env` added to this process's environment, without blocking
 * this process (whose lab servers must keep answering); resolves with the exit code and what it wrote.
 */
export function runCli(args: readonly string[], stdin = '', env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

export interface ServeProcess {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:PORT` (`https://` over TLS). */
  readonly origin: string;
  readonly port: number;
  /** The exit code, once the process has exited. */
  readonly exited: Promise<number | null>;
  /** What the server wrote on standard error so far. */
  stderr(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `mailverify serve --port 0` with `args` and `env` added to this process's environment; rejects with what it
 * printed when it exits before listening. `onStderr` sees standard error as it grows.
 */
export async function startServe(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  onStderr?: (stderr: string) => void,
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += String(chunk);
    onStderr?.(stderr);
  });
  const origin = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk) => {
      stdout += String(chunk);
      const match = /listening on (https?:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match !== null) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return {
    child,
    origin,
    port: Number(new URL(origin).port),
    exited,
    stderr: () => stderr,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * Submits `inputs` as one 2.x job to a served process as root and waits for it (waitTime), throwing unless it was
 * answered complete; the job's entries.
 */
export async function verifyThroughServe<T = { status: string }>(origin: string, rootPassword: string, inputs: readonly string[]): Promise<T[]> {
  const submitted = await fetch(`${origin}/v2.7/email-validations?waitTime=20000`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`root:${rootPassword}`).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ entries: inputs.map((inputData) => ({ inputData })) }),
  });
  if (submitted.status !== 200) throw new Error(`the job was answered ${submitted.status}: ${await submitted.text()}`);
  return ((await submitted.json()) as { entries: { data: T[] } }).entries.data;
}
