// The console's size budget: the JavaScript the first page (sign-in) loads, gzipped (-9), is at most 150 KB. The
// first page loads the scripts and module preloads its index.html names; the chart's chunk comes with a job's
// results only. Measured on the build (npm run build), and stated on standard output.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { facesFolder } from '../../packages/server/src/server/faces.js';

const BUDGET = 150 * 1024;

describe("the console's size", () => {
  it('is at most 150 KB of JavaScript gzipped for the first page', () => {
    const folder = facesFolder('console');
    expect(folder, 'the console is built (npm run build)').not.toBeNull();
    const html = readFileSync(join(folder!, 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*\brel="modulepreload"[^>]*\bhref)="([^"]+\.js)"/g)].map((match) => match[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    const sizes = scripts.map((script) => ({ script, gzip: gzipSync(readFileSync(join(folder!, script)), { level: 9 }).length }));
    const total = sizes.reduce((sum, { gzip }) => sum + gzip, 0);
    const all = readdirSync(join(folder!, 'assets')).filter((name) => name.endsWith('.js'));
    const everything = all.reduce((sum, name) => sum + gzipSync(readFileSync(join(folder!, 'assets', name)), { level: 9 }).length, 0);
    process.stdout.write(
      `console first page: ${(total / 1024).toFixed(1)} KB of JavaScript gzipped (${sizes.map(({ script, gzip }) => `${script} ${gzip} B`).join(', ')}); ` +
        `all of its JavaScript, the chart's included: ${(everything / 1024).toFixed(1)} KB; budget ${BUDGET / 1024} KB\n`,
    );
    expect(total).toBeLessThanOrEqual(BUDGET);
  });

  it('leaves Chart.js out of the first page: its chunk is loaded with a job', () => {
    const folder = facesFolder('console')!;
    const html = readFileSync(join(folder, 'index.html'), 'utf8');
    const entry = /<script[^>]*\bsrc="([^"]+)"/.exec(html)![1]!;
    const code = readFileSync(join(folder, entry), 'utf8');
    expect(code).not.toMatch(/DoughnutController|chart\.js/i);
    expect(code).toMatch(/import\(/);
  });
});
