import { useEffect, useRef, useState } from 'preact/hooks';
import type { Doughnut, Slice } from './doughnut.js';

const STANDARD = ['Deliverable', 'Risky', 'Undeliverable', 'Unknown'];
/** Custom classification names take the colours after the four standard ones'. */
const CUSTOM_COLOURS = 4;

/** The colour class of a classification (styles.css holds the colours; the chart reads the same ones). */
export function colourClass(classification: string, order: readonly string[]): string {
  const standard = STANDARD.indexOf(classification);
  if (standard !== -1) return `colour-${classification.toLowerCase()}`;
  const custom = order.filter((name) => !STANDARD.includes(name)).indexOf(classification);
  return `colour-custom-${custom % CUSTOM_COLOURS}`;
}

/** The classifications in a stable order: the standard ones first, then custom names as met. */
function ordered(counts: ReadonlyMap<string, number>): string[] {
  return [...STANDARD.filter((name) => counts.has(name)), ...[...counts.keys()].filter((name) => !STANDARD.includes(name))];
}

/** A colour as the stylesheet gives it to an element of `className`. */
function colourOf(host: Element, className: string): string {
  const probe = document.createElement('span');
  probe.className = `swatch ${className}`;
  host.append(probe);
  const colour = getComputedStyle(probe).backgroundColor;
  probe.remove();
  return colour;
}

/**
 * The figure "Classifications": a doughnut chart, and the same figures as a table of one row per classification with
 * its count (what screen readers read: the canvas is hidden from them).
 */
export function ClassificationsFigure({ counts, total }: { counts: ReadonlyMap<string, number>; total: number }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Doughnut | null>(null);
  const [chartError, setChartError] = useState(false);
  const names = ordered(counts);

  useEffect(() => {
    const slices = (): Slice[] => names.map((name) => ({ label: name, value: counts.get(name) ?? 0, color: colourOf(canvas.current!.parentElement!, colourClass(name, names)) }));
    if (chart.current !== null) {
      chart.current.update(slices());
      return;
    }
    let gone = false;
    import('./doughnut.js').then(
      ({ drawDoughnut }) => {
        if (!gone && canvas.current !== null) chart.current = drawDoughnut(canvas.current, slices());
      },
      () => setChartError(true),
    );
    return () => {
      gone = true;
    };
  }, [counts]);
  useEffect(
    () => () => {
      chart.current?.destroy();
      chart.current = null;
    },
    [],
  );

  return (
    <figure class="classifications" aria-labelledby="classifications-caption">
      <figcaption id="classifications-caption">Classifications</figcaption>
      <div class="chart">
        <canvas ref={canvas} aria-hidden="true" />
      </div>
      {chartError && <p class="hint">The chart could not be drawn; the table holds its figures.</p>}
      <table class="legend">
        <thead>
          <tr>
            <th scope="col">Classification</th>
            <th scope="col" class="number">Count</th>
          </tr>
        </thead>
        <tbody>
          {names.map((name) => (
            <tr key={name}>
              <th scope="row">
                <span class={`swatch ${colourClass(name, names)}`} aria-hidden="true" />
                {name}
              </th>
              <td class="number">{counts.get(name)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="hint">{total} entries in all.</p>
    </figure>
  );
}
