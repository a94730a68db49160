// The processes of a cluster for the recovery tests: `mailverify serve` (API only) and `mailverify worker` from the
// built package, on a store and a queue, verifying against the mail lab.
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI, startServe, type ServeProcess } from '../lab/serve-process.js';
import type { MailLab } from '../lab/mail-lab.js';

export const ROOT_PASSWORD = 'cluster recovery root password';

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stderr(): string;
}

/** The options every process of the test cluster shares: the store, the queue, the lab, short leases and rounds. */
export function clusterArgs(lab: MailLab, storeUrl: string, queueUrl: string, extra: readonly string[] = []): string[] {
  return [
    '--store', storeUrl,
    '--queue', queueUrl,
    '--dns-server', lab.dnsAddress,
    '--smtp-port', String(lab.port),
    '--allow-private-addresses',
    '--helo-name', 'probe.mailverify-lab.com',
    '--mail-from', 'bounce@mailverify-lab.com',
    '--reconcile-interval', '300',
    ...extra,
  ];
}

export function startApi(args: readonly string[]): Promise<ServeProcess> {
  return startServe(['--workers', '0', ...args], { MAILVERIFY_ROOT_PASSWORD: ROOT_PASSWORD, MAILVERIFY_LOG_LEVEL: 'warn' });
}

/** `mailverify worker` with `args` (and Node's own `nodeArgs`, e.g. --cpu-prof); resolves once it says it is ready. */
export async function startWorker(args: readonly string[], nodeArgs: readonly string[] = []): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'worker', ...args], { env: { ...process.env, MAILVERIFY_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  await new Promise<void>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk) => {
      stdout += String(chunk);
      if (stdout.includes('mailverify worker ready')) resolve();
    });
    void exited.then((code) => reject(new Error(`worker exited with ${code}: ${stderr}`)));
  });
  return { child, exited, stderr: () => stderr };
}
