/** How the console writes times, shares and job names. */

export function formatTime(iso: string | undefined): string {
  if (iso === undefined) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function formatPercent(share: number): string {
  return `${Math.floor(share * 100)} %`;
}

/** A job's name, else the start of its id. */
export function jobTitle(job: { readonly id: string; readonly name?: string }): string {
  return job.name !== undefined && job.name !== '' ? job.name : `Job ${job.id.slice(0, 8)}`;
}

export const STATUS_LABELS: Readonly<Record<string, string>> = { InProgress: 'In progress', Completed: 'Completed', Deleted: 'Deleted', Expired: 'Expired' };

const UNITS: readonly (readonly [seconds: number, one: string, many: string])[] = [
  [86_400, 'day', 'days'],
  [3600, 'hour', 'hours'],
  [60, 'minute', 'minutes'],
  [1, 'second', 'seconds'],
];

/** A duration as the interface writes it (`[d.]hh:mm:ss`), for people: its two largest units (`1 day 2 hours`). */
export function formatDuration(duration: string): string {
  const match = /^(?:(\d+)\.)?(\d+):(\d+):(\d+)/.exec(duration);
  if (match === null) return duration;
  let seconds = Number(match[1] ?? 0) * 86_400 + Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4]);
  const parts: string[] = [];
  for (const [size, one, many] of UNITS) {
    const count = Math.floor(seconds / size);
    seconds -= count * size;
    if (count > 0 && parts.length < 2) parts.push(`${count} ${count === 1 ? one : many}`);
  }
  return parts.length === 0 ? 'less than a second' : parts.join(' ');
}
