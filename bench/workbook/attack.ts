// The workbook attack of issue 16 against the built `mailverify serve`, and its variants: an xlsx holding one 200 MiB
// string (shared, or inline in its cell), one of 120 MiB (under the shared string table's cap: whole, or in rich-text
// runs), one of 250 MiB cut by comments, and 127 strings of 1 MB (within every cap). Each is uploaded once, then four
// times at once, to a fresh server; printed: the server's peak RSS (VmHWM, Linux) and the answers. ONLY=text keeps the
// files whose name holds it. Run: npm run build && npm run bench:workbook [-- serve flags].
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeCommentCutCellWorkbook, writeHugeInlineCellWorkbook, writeManySharedStringsWorkbook, writeHugeSharedStringWorkbook, writeRichTextSharedStringWorkbook } from '../../test/lab/hostile-workbook.js';
import { startServe } from '../../test/lab/serve-process.js';

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const PASSWORD = 'workbook-attack-password';
const STRING_BYTES = 200 * 1024 * 1024;

async function peakRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

async function upload(origin: string, file: Buffer): Promise<string> {
  const form = new FormData();
  form.append('inputFile', new Blob([file], { type: XLSX_TYPE }), 'attack.xlsx');
  const response = await fetch(`${origin}/v2.7/email-validations`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}` },
    body: form,
  });
  const body = (await response.json()) as { detail?: string };
  const retry = response.headers.get('retry-after');
  return `${response.status}${retry === null ? '' : ` (Retry-After ${retry})`} ${body.detail ?? ''}`.trim();
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const dir = mkdtempSync(join(tmpdir(), 'mailverify-workbook-attack-'));
try {
  const files: [string, string][] = [
    ['one 200 MiB shared string', join(dir, 'shared.xlsx')],
    ['one 200 MiB inline cell', join(dir, 'inline.xlsx')],
    ['one 120 MiB shared string', join(dir, 'shared-120.xlsx')],
    ['one 120 MiB shared string in rich-text runs of 512 KiB', join(dir, 'rich.xlsx')],
    ['one 250 MiB inline cell cut by a comment every 512 KiB', join(dir, 'comments.xlsx')],
    ['127 shared strings of 1,000,000 bytes (within every cap)', join(dir, 'many.xlsx')],
  ];
  await writeHugeSharedStringWorkbook(files[0]![1], STRING_BYTES);
  await writeHugeInlineCellWorkbook(files[1]![1], STRING_BYTES);
  await writeHugeSharedStringWorkbook(files[2]![1], 120 * 1024 * 1024);
  await writeRichTextSharedStringWorkbook(files[3]![1], 120 * 1024 * 1024, 512 * 1024);
  await writeCommentCutCellWorkbook(files[4]![1], 250 * 1024 * 1024, 512 * 1024);
  await writeManySharedStringsWorkbook(files[5]![1], 127, 1_000_000);
  const only = process.env['ONLY'];
  if (only !== undefined) files.splice(0, files.length, ...files.filter(([name]) => name.includes(only)));
  console.log(`load average ${loadavg().map((load) => load.toFixed(1)).join(' ')}, ${process.argv.slice(2).join(' ') || 'default options'}`);
  for (const [name, path] of files) {
    for (const concurrent of [1, 4]) {
      const server = await startServe(['--data-dir', join(dir, `data-${concurrent}-${statSync(path).ino}`), '--log-level', 'warn', '--checks', 'syntax', ...process.argv.slice(2)], {
        MAILVERIFY_ROOT_PASSWORD: PASSWORD,
      });
      try {
        const file = readFileSync(path);
        const answers = await Promise.all(Array.from({ length: concurrent }, () => upload(server.origin, file)));
        console.log(`${name} (${(file.length / 1024).toFixed(0)} KiB), ${concurrent} at once: peak RSS ${mib(await peakRss(server.child.pid!))}`);
        for (const answer of new Set(answers)) console.log(`  ${answers.filter((a) => a === answer).length} × ${answer}`);
      } finally {
        await server.stop();
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
