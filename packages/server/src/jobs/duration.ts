/**
 * Durations of the service's interface (retention, estimated time remaining): .NET TimeSpan strings. Read leniently,
 * `[d.]h:m:s[.f]` with unpadded parts (`0:5:0`, `1.02:03:04`, `00:00:10.5`); written `hh:mm:ss` in whole seconds,
 * with a `d.` prefix from 24 hours on (`1.00:00:00`), as the official clients parse them.
 */

const DURATION = /^(?:(\d{1,7})\.)?(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,7}))?$/;

/** Milliseconds of a duration string, or null when it is not one (hours < 24, minutes and seconds < 60). */
export function parseDuration(text: string): number | null {
  const match = DURATION.exec(text);
  if (match === null) return null;
  const [, days = '0', hours, minutes, seconds, fraction = ''] = match;
  if (Number(hours) > 23 || Number(minutes) > 59 || Number(seconds) > 59) return null;
  const ms = Math.floor(Number(`0.${fraction || '0'}`) * 1000);
  return ((Number(days) * 24 + Number(hours)) * 60 + Number(minutes)) * 60_000 + Number(seconds) * 1000 + ms;
}

/** `[d.]hh:mm:ss`, whole seconds rounded up (a remaining time of 0.4 s is `00:00:01`, not zero). */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const days = Math.floor(total / 86_400);
  const rest = total % 86_400;
  const clock = [Math.floor(rest / 3600), Math.floor((rest % 3600) / 60), rest % 60]
    .map((n) => String(n).padStart(2, '0'))
    .join(':');
  return days > 0 ? `${days}.${clock}` : clock;
}
