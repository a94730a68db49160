import { useEffect, useRef } from 'preact/hooks';
import type { Api } from '../api.js';
import { problemText } from '../components/problem.js';
import { useAnswer } from '../users/hooks.js';
import type { Paged } from '../users/types.js';
import type { UsageDay } from './bar-chart.js';

/** Days shown: the last 30 UTC days, today included. */
const DAYS = 30;

const number = new Intl.NumberFormat('en', { maximumFractionDigits: 6 });
export const credits = (value: number): string => number.format(value);

/** The UTC date `days` before today, `yyyy-mm-dd`. */
function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}

/** Every day of the period, those without consumption at 0, so that the chart reads as a timeline. */
function everyDay(days: readonly UsageDay[]): UsageDay[] {
  const used = new Map(days.map((day) => [day.date, day]));
  return Array.from({ length: DAYS }, (_, index) => {
    const date = daysAgo(DAYS - 1 - index);
    return used.get(date) ?? { date, freeCredits: 0, creditPacks: 0 };
  });
}

/** Every day with consumption since `since`, following the pages (a month fits one page). */
async function dailyUsage(api: Api, since: string, signal: AbortSignal): Promise<UsageDay[]> {
  const days: UsageDay[] = [];
  let query: Record<string, string | number> = { 'date:since': since, limit: 100 };
  for (;;) {
    const page = await api.get<Paged<UsageDay>>('/credits/daily-usage', query, signal);
    days.push(...page.data);
    if (!page.meta.isTruncated || page.meta.cursor === undefined) return days;
    query = { cursor: page.meta.cursor };
  }
}

/**
 * The figure "Daily usage": a bar chart of the credits consumed each day, free ones and from packs, and the same
 * numbers as a table (the chart's alternative for screen readers and keyboard users).
 */
export function DailyUsage({ api }: { api: Api }) {
  const { value: days, error } = useAnswer((signal) => dailyUsage(api, daysAgo(DAYS - 1), signal), [api]);
  const canvas = useRef<HTMLCanvasElement>(null);

  useEffect(() => {
    if (days === null || days.length === 0 || canvas.current === null) return;
    let chart: { destroy(): void } | null = null;
    let gone = false;
    void import('./bar-chart.js').then(({ drawDailyUsage }) => {
      if (!gone && canvas.current !== null) chart = drawDailyUsage(canvas.current, everyDay(days));
    });
    return () => {
      gone = true;
      chart?.destroy();
    };
  }, [days]);

  if (error !== null) {
    return (
      <section aria-labelledby="usage-title">
        <h2 id="usage-title">Daily usage</h2>
        <p class="problem">{problemText(error)}</p>
      </section>
    );
  }
  const total = (day: UsageDay) => day.freeCredits + day.creditPacks;
  return (
    <figure class="usage" aria-labelledby="usage-title">
      <figcaption id="usage-title">
        <h2>Daily usage</h2>
        <span class="hint">Credits consumed each UTC day of the last {DAYS} days; a job's cost counts from its submission.</span>
      </figcaption>
      {days === null && <p>Loading…</p>}
      {days !== null && days.length === 0 && <p>No credits were used in the last {DAYS} days.</p>}
      {days !== null && days.length > 0 && (
        <>
          <div class="bar-chart">
            <canvas ref={canvas} role="img" aria-label="Bar chart of the credits used each day of the last 30 days; the table below lists the days with use." />
          </div>
          <div class="table-wrap">
            <table aria-label="Credits used each day">
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col" class="number">Free credits</th>
                  <th scope="col" class="number">Credit packs</th>
                  <th scope="col" class="number">Total</th>
                </tr>
              </thead>
              <tbody>
                {days.map((day) => (
                  <tr key={day.date}>
                    <th scope="row">{day.date}</th>
                    <td class="number">{credits(day.freeCredits)}</td>
                    <td class="number">{credits(day.creditPacks)}</td>
                    <td class="number">{credits(total(day))}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </figure>
  );
}
