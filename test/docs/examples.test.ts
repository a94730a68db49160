// The inventory of the examples: every ts/js block of the README and docs/ is run by program-examples.test.ts and
// every sh/bash/console block by shell-examples.test.ts, unless it is marked `<!-- example: not run: REASON -->`
// right before its fence; the marked ones are the list below, so that a block is never left unrun unnoticed. Blocks
// of other languages are data (json, yaml, ini, nginx), web page parts (html, css: test/widget loads the widget's
// form) or output (no language).
import { describe, expect, it } from 'vitest';
import { allBlocks, PROGRAM_LANGS, RUN_BY_CONTAINER_TEST, SHELL_LANGS } from './code-blocks.js';

/** The blocks not run, by document and the start of their first line, with why. */
const NOT_RUN: readonly (readonly [file: string, start: string, why: string])[] = [
  ['README.md', 'npm ci && npm pack', 'builds and installs the package elsewhere (.ci/run does it)'],
  ['docs/accounts.md', "import { BearerAuthenticator, VerifaliaRestClient } from 'verifalia';", 'the official client is a test dependency only'],
  ['docs/accounts.md', "const answer = await fetch('https://verify.example.com", "a web page's script"],
  ['docs/cli.md', 'mailverify doctor --helo-name verify.example.com', "checks this host's way out to the Internet"],
  ['docs/deployment.md', 'mailverify doctor --helo-name probe1.example.com', "checks this host's way out to the Internet"],
  ['docs/deployment.md', 'sudo useradd', 'sudo, system folders'],
  ['docs/deployment.md', 'sudo install -d -o root -g root -m 0700', 'sudo, /etc'],
  ['docs/deployment.md', 'sudo systemctl daemon-reload', 'systemd'],
  ['docs/deployment.md', 'sudo -u mailverify', 'the service user of the setup'],
  ['docs/development.md', 'npm ci && npm run sample', 'builds the repository and runs the whole suite'],
  ['docs/doctor.md', 'mailverify doctor --helo-name probe1.example.com', "checks this host's way out to the Internet"],
  ['docs/doctor.md', "import { diagnoseEgress } from 'mailverify';", "checks this host's way out to the Internet"],
  ['docs/egress.md', 'read -rs PROXY_PASSWORD', "/etc and a SOCKS5 proxy of one's own"],
  ['docs/scaling.md', 'read -rs ROOT_PASSWORD', 'PostgreSQL and Redis'],
  ['docs/scaling.md', '# Stop the server first', 'PostgreSQL'],
  ['docs/server.md', "import Fastify from 'fastify';", 'keeps a server listening'],
  ['docs/server.md', "import { VerifaliaRestClient, WaitOptions } from 'verifalia';", 'the official client is a test dependency only'],
  ['docs/troubleshooting.md', 'dig @9.9.9.9 MX gmail.com +time=5 +tries=1', 'a public DNS server'],
  ['docs/troubleshooting.md', 'dig @9.9.9.9 MX gmail.com +time=5 +tries=1', 'a public DNS server'],
  ['docs/troubleshooting.md', 'dig @9.9.9.9 MX gmail.com     #', 'a public DNS server'],
  ['docs/troubleshooting.md', 'dig @9.9.9.9 MX example.com', 'a public DNS server'],
  ['docs/troubleshooting.md', 'nc -vz -w 10 gmail-smtp-in.l.google.com 25', "exchangers' port 25"],
  ['docs/troubleshooting.md', 'dig +short -x 203.0.113.7', "the Internet's DNS and port 25"],
  ['docs/widget.md', "import { attach } from 'https://verify.example.com/widget/v1.mjs';", 'a web page\'s module (test/widget runs it in Chromium)'],
  ['docs/widget.md', 'window.solveCaptcha = () =>', "a web page's script with Cloudflare's Turnstile"],
  ['docs/widget.md', "document.querySelector('form').addEventListener", "a web page's script"],
];

const DATA_LANGS = ['json', 'yaml', 'ini', 'nginx', 'html', 'css', ''];

describe('the examples of the README and docs/', () => {
  const blocks = allBlocks();

  it('are programs, shell commands, data or output', () => {
    const other = blocks.filter((b) => ![...PROGRAM_LANGS, ...SHELL_LANGS, ...DATA_LANGS].includes(b.lang));
    expect(other.map((b) => `${b.file}:${b.line}: ${b.lang}`)).toEqual([]);
  });

  it('run by the container test are the sh blocks of the Container section of docs/deployment.md', () => {
    const byContainerTest = blocks.filter((b) => b.skipReason?.startsWith(RUN_BY_CONTAINER_TEST) === true);
    expect(byContainerTest.length).toBeGreaterThan(3);
    expect(byContainerTest.filter((b) => b.file !== 'docs/deployment.md' || b.lang !== 'sh')).toEqual([]);
  });

  it('are run unless marked, and the marked ones are exactly those listed here', () => {
    const marked = blocks
      .filter((b) => [...PROGRAM_LANGS, ...SHELL_LANGS].includes(b.lang) && b.skipReason !== null && !b.skipReason.startsWith(RUN_BY_CONTAINER_TEST))
      .map((b) => `${b.file}: ${b.code.trimStart().split('\n')[0]!.trim()}`);
    expect(marked.length).toBe(NOT_RUN.length);
    NOT_RUN.forEach(([file, start], n) => expect(marked[n], `${file}: ${start}`).toMatch(new RegExp(`^${file.replace(/\./g, '\\.')}: ${start.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)));
  });

  it('marked blocks give their reason', () => {
    for (const block of blocks.filter((b) => b.skipReason !== null)) expect(block.skipReason!.length, `${block.file}:${block.line}`).toBeGreaterThan(10);
  });

  it('of data are valid: every json block parses', () => {
    const broken = blocks.filter((b) => b.lang === 'json').flatMap((b) => {
      try {
        JSON.parse(b.code);
        return [];
      } catch (error) {
        return [`${b.file}:${b.line}: ${(error as Error).message}`];
      }
    });
    expect(broken).toEqual([]);
  });

  it('are many: the counts run', () => {
    const run = blocks.filter((b) => [...PROGRAM_LANGS, ...SHELL_LANGS].includes(b.lang) && b.skipReason === null);
    process.stdout.write(`examples run: ${run.filter((b) => PROGRAM_LANGS.includes(b.lang)).length} programs, ${run.filter((b) => SHELL_LANGS.includes(b.lang)).length} shell blocks; not run: ${NOT_RUN.length}\n`);
    expect(run.length).toBeGreaterThanOrEqual(45);
  });
});
