/**
 * The classification chart: a Chart.js doughnut on a canvas, loaded with the job page's results only (it is most of
 * the console's JavaScript). Only the parts it draws with are registered, so the rest of Chart.js is left out.
 */
import { ArcElement, Chart, DoughnutController, Tooltip } from 'chart.js';

Chart.register(DoughnutController, ArcElement, Tooltip);

export interface Slice {
  readonly label: string;
  readonly value: number;
  readonly color: string;
}

export interface Doughnut {
  update(slices: readonly Slice[]): void;
  destroy(): void;
}

export function drawDoughnut(canvas: HTMLCanvasElement, slices: readonly Slice[]): Doughnut {
  const chart = new Chart<'doughnut', number[], string>(canvas, {
    type: 'doughnut',
    data: { labels: [], datasets: [{ data: [], backgroundColor: [], borderWidth: 1 }] },
    options: {
      responsive: true,
      maintainAspectRatio: true,
      animation: false,
      plugins: { tooltip: { enabled: true } },
    },
  });
  const update = (next: readonly Slice[]) => {
    chart.data.labels = next.map((slice) => slice.label);
    const dataset = chart.data.datasets[0]!;
    dataset.data = next.map((slice) => slice.value);
    dataset.backgroundColor = next.map((slice) => slice.color);
    chart.update();
  };
  update(slices);
  return { update, destroy: () => chart.destroy() };
}
