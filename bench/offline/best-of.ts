/** Best nanoseconds per item over `passes` runs of `body`, which handles `count` items and returns a number to keep. */
export function bestNsPerItem(passes: number, count: number, body: () => number): number {
  let best = Infinity;
  let sink = 0;
  for (let pass = 0; pass < passes; pass++) {
    const started = process.hrtime.bigint();
    sink += body();
    best = Math.min(best, Number(process.hrtime.bigint() - started));
  }
  if (sink === -1) console.log(sink); // the results are used, so the work is not optimised away
  return best / count;
}
