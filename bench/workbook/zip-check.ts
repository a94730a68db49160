// The time of the xlsx archive check (zip-check.ts, with its XML token meter) on a workbook of a million rows of inline
// strings (72 MB of sheet XML), against inflating every entry of it alone (yauzl), interleaved, medians of 5.
// Run: npm run bench:workbook-check.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import yauzl from 'yauzl';
import { checkXlsxArchive } from '../../packages/server/src/server/import/zip-check.js';
import { writeSlowWorkbook } from '../../test/lab/hostile-workbook.js';

const dir = mkdtempSync(join(tmpdir(), 'mailverify-zip-check-bench-'));
try {
  const path = join(dir, 'rows.xlsx');
  await writeSlowWorkbook(path, 1_000_000);
  const limits = { maxInflatedBytes: 256 * 1024 * 1024, maxSharedStringsBytes: 128 * 1024 * 1024, maxSharedStringBytes: 8 * 1024 * 1024, maxXmlTokenBytes: 1024 * 1024 };
  const inflate = async () => {
    const zip = await yauzl.openPromise(path, { lazyEntries: true });
    for await (const entry of zip.eachEntry()) for await (const chunk of await zip.openReadStreamPromise(entry)) void chunk;
    zip.close();
  };
  const metered: number[] = [];
  const floor: number[] = [];
  for (let round = 0; round < 5; round++) {
    for (const [times, run] of [[metered, () => checkXlsxArchive(path, limits)], [floor, inflate]] as const) {
      const started = performance.now();
      await run();
      times.push(performance.now() - started);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(`load average ${loadavg().map((load) => load.toFixed(1)).join(' ')}`);
  console.log(`check with the XML meter: ${median(metered).toFixed(0)} ms; inflating alone: ${median(floor).toFixed(0)} ms (medians of 5)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
