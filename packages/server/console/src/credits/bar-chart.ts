/**
 * The daily usage as a stacked bar chart (Chart.js, only the parts a bar chart needs, so the rest is left out of the
 * build). Loaded on demand by the Credits page. No animation: the figure is drawn once per answer.
 */
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

export interface UsageDay {
  readonly date: string;
  readonly freeCredits: number;
  readonly creditPacks: number;
}

/** Colours of the bars: each has a contrast of at least 3:1 on white, and they differ from one another in lightness. */
const FREE = '#1d6b32';
const PACKS = '#0b5cad';
const INK = '#1b1f24';

/** Draws `days` on `canvas`; the chart, to destroy when the figure goes. */
export function drawDailyUsage(canvas: HTMLCanvasElement, days: readonly UsageDay[]): { destroy(): void } {
  return new Chart(canvas, {
    type: 'bar',
    data: {
      // Month and day: the year is in the table.
      labels: days.map((day) => day.date.slice(5)),
      datasets: [
        { label: 'Free credits', data: days.map((day) => day.freeCredits), backgroundColor: FREE, maxBarThickness: 24 },
        { label: 'Credit packs', data: days.map((day) => day.creditPacks), backgroundColor: PACKS, maxBarThickness: 24 },
      ],
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      scales: {
        x: { stacked: true, ticks: { color: INK, maxRotation: 0, autoSkipPadding: 12 }, grid: { display: false } },
        y: { stacked: true, beginAtZero: true, ticks: { color: INK, precision: 0 }, title: { display: true, text: 'Credits', color: INK } },
      },
      plugins: { legend: { labels: { color: INK } } },
    },
  });
}
