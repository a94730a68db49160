// The console behind the server's request rate limits (`serve --rate-limits`): a read answered 429 is asked again
// after its Retry-After, so a busy client address slows the console down instead of breaking its pages. In headless
// Chromium, while the test process (the same address) keeps the address's bucket empty, the jobs page gets a 429,
// then its list once the bucket refills.
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { CHROMIUM, needing } from '../lab/system-programs.js';
import { ROOT, ROOT_PASSWORD, signIn, startConsoleLab, withConsole, type ConsoleLab } from './console-lab.js';

// A browser test on a loaded machine takes its time: each has a minute and a half.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const { path: chromium, it } = needing(CHROMIUM, 'the console behind request rate limits in a browser');

let lab: ConsoleLab;
beforeAll(async () => {
  if (chromium !== null) lab = await startConsoleLab(chromium, { flags: ['--rate-limits'] });
}, 60_000);
afterAll(async () => {
  await lab?.close();
});

describe('the console behind request rate limits', () => {
  it('asks again after Retry-After when a read is answered 429', { timeout: 60_000 }, async () => {
    await withConsole(lab, '#/new', async (page) => {
      await signIn(page, ROOT, ROOT_PASSWORD);
      await page.getByRole('heading', { name: 'New job' }).waitFor();
      // Keep the bucket of 127.0.0.1 empty (several requests in flight) until the page has been refused once.
      let refused = false;
      const hammers = Array.from({ length: 4 }, async () => {
        let ours = 0;
        while (!refused) if ((await lab.asRoot('GET', '/v2.7/email-validations?limit=1')).status === 429) ours++;
        return ours;
      });
      const list = (response: { url(): string }) => /\/v2\.7\/email-validations\?limit=25$/.test(response.url());
      // A refill can still let one request through now and then: go to the jobs again until one is refused.
      for (let round = 0; round < 10 && !refused; round++) {
        if (round > 0) await page.getByRole('link', { name: 'New job' }).click();
        const first = page.waitForResponse(list);
        await page.getByRole('link', { name: 'Jobs' }).click();
        refused = (await first).status() === 429;
        if (!refused) await page.getByRole('table', { name: 'Jobs' }).waitFor();
      }
      expect(refused).toBe(true);
      expect((await Promise.all(hammers)).reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
      await page.waitForResponse((response) => list(response) && response.status() === 200);
      await page.getByRole('table', { name: 'Jobs' }).waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);
    });
  });
});
