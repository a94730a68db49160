// The shell examples of the README and docs/, run by bash against the built package, nothing beyond loopback:
//
// - The sh/bash/console blocks of one document run in order, as one script (`set -euo pipefail`), in a folder of
//   their own, so that a variable or a server that a block sets up serves the blocks after it. A `console` block's
//   commands are its `$ ` lines; the other lines are output.
// - `mailverify` and `npx mailverify` are `node packages/mailverify/bin/mailverify.js`. `check` at `--checks dns` or `smtp`, and `serve`, are
//   pointed at the loopback mail lab (its DNS server stands for every `--dns-server`, its SMTP port for port 25, private
//   addresses allowed): `example.com` has the mailboxes jane and info there. CAPTCHA tokens are checked by a siteverify
//   double that accepts every token. The ports 8080 to 8089 of an example are replaced by free ones.
// - `curl` fails a command whose answer is 400 or more, unless the comment right after the command begins with that
//   status (`# 400 {"type": …}`); a curl that prints `%{http_code}` itself is not checked.
// - A block right after `<!-- example: not run: REASON -->` is not run; examples.test.ts lists those.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { allBlocks, ROOT, SHELL_LANGS, shellCommands, type Block } from './code-blocks.js';

/** The runnable shell blocks, by document, in document order. */
export function shellDocuments(): Map<string, Block[]> {
  const byFile = new Map<string, Block[]>();
  for (const block of allBlocks().filter((b) => SHELL_LANGS.includes(b.lang) && b.skipReason === null)) {
    byFile.set(block.file!, [...(byFile.get(block.file!) ?? []), block]);
  }
  return byFile;
}

/** The status a command's comment says it answers (`# 400 …`, `# → 403`), or null. */
function expectedStatus(after: readonly string[]): string | null {
  return /^#\s*(?:→\s*)?([1-5]\d\d)\b/.exec(after[0] ?? '')?.[1] ?? null;
}

/** The blocks of one document as one bash script: each command announced, and its expected status set first. */
export function script(blocks: readonly Block[], ports: Map<string, string>): string {
  const parts: string[] = [PRELUDE];
  for (const block of blocks) {
    for (const command of shellCommands(block)) {
      const text = command.text.replace(/\b808\d\b/g, (port) => ports.get(port) ?? port);
      parts.push(`__at ${JSON.stringify(`${block.file}:${command.line}`)} ${expectedStatus(command.after) ?? ''}`);
      parts.push(text);
    }
  }
  parts.push('__at end');
  return parts.join('\n') + '\n';
}

const PRELUDE = String.raw`set -euo pipefail
__pids() { jobs -p; }
trap 'for p in $(__pids); do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT
__EXPECT=
__at() { printf '%s\n' "$1" > "$__STATUS"; __EXPECT="$%{2:-}"; }
curl() {
  local headers status
  case " $* " in *'%{http_code}'*) command curl "$@"; return;; esac
  headers=$(mktemp)
  command curl -D "$headers" "$@" || { local rc=$?; rm -f "$headers"; return "$rc"; }
  status=$(grep -aoE '^HTTP/[0-9.]+ [0-9]{3}' "$headers" | tail -n 1 | awk '{print $2}')
  rm -f "$headers"
  if [ -n "$__EXPECT" ]; then
    [ "$status" = "$__EXPECT" ] || { echo "curl: the answer is $status, the example says $__EXPECT" >&2; return 22; }
  elif [ "$status" -ge 400 ]; then
    echo "curl: the answer is $status, and the example does not say it expects one" >&2
    return 22
  fi
}
`.replace(/\$%\{/g, '${');

const MAILVERIFY_SHIM = String.raw`#!/usr/bin/env bash
# mailverify, as the examples' tests run it: the built CLI, with check's network checks pointed at the mail lab.
args=()
checks=syntax
while [ $# -gt 0 ]; do
  case "$1" in
    --dns-server|--smtp-port|--helo-name|--mail-from) shift 2; continue;;
    --checks) checks="$2";;
  esac
  args+=("$1"); shift
done
if [ "$%{args[0]:-}" = check ] && [ "$checks" != syntax ]; then
  args+=(--dns-server "$LAB_DNS" --allow-private-addresses --dns-timeout 1000)
  [ "$checks" = smtp ] && args+=(--smtp-port "$LAB_SMTP_PORT" --helo-name probe.mailverify-lab.com --mail-from bounce@mailverify-lab.com)
fi
exec "$NODE" "$MV_EXAMPLES_CLI" "$%{args[@]}"
`.replace(/\$%\{/g, '${');

const NPX_SHIM = String.raw`#!/usr/bin/env bash
# npx, as the examples' tests run it: only for the package itself.
if [ "$%{1:-}" = mailverify ]; then shift; exec mailverify "$@"; fi
echo "npx $1: the examples' tests run npx mailverify only" >&2
exit 127
`.replace(/\$%\{/g, '${');

/** A free TCP port on loopback. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A siteverify double: every provider's endpoint accepts every token (reCAPTCHA v3 with a score of 0.9). */
function startSiteverify(): Promise<{ server: Server; origin: string }> {
  const server = createHttpServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ success: true, score: 0.9, action: 'submit', hostname: 'localhost', challenge_ts: new Date().toISOString() }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` })));
}

/** The files the examples read, made in each document's folder. */
const FIXTURES: Record<string, string> = {
  'list.txt': 'jane@example.com\nJane@Example.com\nno-at-sign\ninfo@gmial.com\n',
  'people.csv': 'name,company,email\nJane Doe,Example,jane@example.com\nJohn Roe,Example,john..roe@example.com\n',
  'export.txt': 'id\tname\temail\n1\tJane Doe\tjane@example.com\n2\tJohn Roe\tjohn@example\n',
  'list.csv': 'email,name\njane@example.com,Jane Doe\ninfo@example.com,Info\n',
};

let lab: MailLab;
let siteverify: { server: Server; origin: string };
let base: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  lab = await startMailLab({
    servers: { strict: { mailboxes: ['jane', 'info', 'ceo', 'alice'] } },
    domains: { 'example.com': ['strict'] },
  });
  siteverify = await startSiteverify();
  base = mkdtempSync(join(tmpdir(), 'mailverify-shell-examples-'));
  const bin = join(base, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'mailverify'), MAILVERIFY_SHIM);
  writeFileSync(join(bin, 'npx'), NPX_SHIM);
  chmodSync(join(bin, 'mailverify'), 0o755);
  chmodSync(join(bin, 'npx'), 0o755);
  // A reader's shell: no variable the examples set themselves, and none of npm's (a server started by npm watches it).
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'ROOT_PASSWORD' && !/^npm_/i.test(name)));
  env = {
    ...inherited,
    PATH: `${bin}:${process.env['PATH'] ?? ''}`,
    NODE: process.execPath,
    MV_EXAMPLES_CLI: join(ROOT, 'packages', 'mailverify', 'bin', 'mailverify.js'),
    LAB_DNS: lab.dnsAddress,
    LAB_SMTP_PORT: String(lab.port),
    MAILVERIFY_DNS_SERVERS: lab.dnsAddress,
    MAILVERIFY_DNS_TIMEOUT: '1000',
    MAILVERIFY_SMTP_PORT: String(lab.port),
    MAILVERIFY_ALLOW_PRIVATE_ADDRESSES: 'true',
    MAILVERIFY_HELO_NAME: 'probe.mailverify-lab.com',
    MAILVERIFY_MAIL_FROM: 'bounce@mailverify-lab.com',
    MAILVERIFY_LOG_LEVEL: 'warn',
    MAILVERIFY_TURNSTILE_SITEVERIFY_URL: `${siteverify.origin}/turnstile`,
    MAILVERIFY_RECAPTCHA_V2_SITEVERIFY_URL: `${siteverify.origin}/recaptcha-v2`,
    MAILVERIFY_RECAPTCHA_V3_SITEVERIFY_URL: `${siteverify.origin}/recaptcha-v3`,
    MAILVERIFY_HCAPTCHA_SITEVERIFY_URL: `${siteverify.origin}/hcaptcha`,
  };
});

afterAll(async () => {
  await lab?.close();
  await new Promise((resolve) => siteverify?.server.close(resolve));
  if (base !== undefined) rmSync(base, { recursive: true, force: true });
});

function bash(file: string, cwd: string, extra: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile('bash', [file], { cwd, env: { ...env, ...extra }, timeout: 150_000, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: `${stdout}\n${stderr}` });
    });
  });
}

describe('the shell examples', () => {
  const documents = shellDocuments();

  it('are found in the README and the guides', () => {
    expect(documents.has('README.md')).toBe(true);
    expect([...documents.values()].flat().length).toBeGreaterThanOrEqual(25);
  });

  for (const [file, blocks] of documents) {
    it(`of ${file} run, in order (${blocks.length} blocks)`, { timeout: 180_000 }, async () => {
      const cwd = join(base, file.replace(/\W/g, '-'));
      mkdirSync(cwd);
      for (const [name, content] of Object.entries(FIXTURES)) writeFileSync(join(cwd, name), content);
      const ports = new Map<string, string>();
      for (let p = 8080; p <= 8089; p++) ports.set(String(p), String(await freePort()));
      const path = join(cwd, '.examples.sh');
      writeFileSync(path, script(blocks, ports));
      const status = join(cwd, '.at');
      const { code, output } = await bash(path, cwd, { __STATUS: status });
      const at = existsSync(status) ? readFileSync(status, 'utf8').trim() : '(before the first command)';
      expect(code === 0 && at === 'end', `the command at ${at} failed (exit ${code}):\n${output.split('\n').slice(-60).join('\n')}`).toBe(true);
    });
  }
});
