// Durations of the REST interface: read as the official clients send them, written as they parse them.
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../packages/server/src/jobs/duration.js';

describe('durations', () => {
  it('reads [d.]h:m:s[.f], padded or not', () => {
    expect(parseDuration('0:5:0')).toBe(300_000);
    expect(parseDuration('00:05:00')).toBe(300_000);
    expect(parseDuration('1:30:0')).toBe(5_400_000);
    expect(parseDuration('30.0:0:0')).toBe(30 * 86_400_000);
    expect(parseDuration('1.02:03:04')).toBe(93_784_000);
    expect(parseDuration('00:00:10.5')).toBe(10_500);
    expect(parseDuration('00:00:00.1234567')).toBe(123);
  });

  it('refuses what is not a duration', () => {
    for (const text of ['', '5', '0:5', '24:00:00', '0:60:0', '0:0:60', '-0:5:0', '1.2.3:0:0', ' 0:5:0', '0:5:0 ', 'a:b:c']) {
      expect(parseDuration(text)).toBeNull();
    }
  });

  it('writes hh:mm:ss in whole seconds, rounded up, with days from 24 hours on', () => {
    expect(formatDuration(0)).toBe('00:00:00');
    expect(formatDuration(400)).toBe('00:00:01');
    expect(formatDuration(300_000)).toBe('00:05:00');
    expect(formatDuration(86_399_000)).toBe('23:59:59');
    expect(formatDuration(86_400_000)).toBe('1.00:00:00');
    expect(formatDuration(93_784_000)).toBe('1.02:03:04');
    expect(formatDuration(30 * 86_400_000)).toBe('30.00:00:00');
    expect(formatDuration(-5)).toBe('00:00:00');
  });

  it('reads back what it writes', () => {
    for (const ms of [0, 1000, 59_000, 3_600_000, 86_400_000, 2_592_000_000, 123_456_000]) {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    }
  });
});
