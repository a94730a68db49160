/**
 * A server's custom quality levels (docs/verification.md#quality-levels-and-passes): levels besides Standard, High and
 * Extreme that jobs name by id in `quality`, each with its own passes, timeouts and unit price.
 */
import { MAX_CREDITS, toMicro } from '../accounts/credits.js';
import { checkQuality, type QualityLevel } from 'mailverify/internal';

/** A custom level as a server keeps it: an id, and a display name (default the id). */
export interface CustomQualityLevel extends QualityLevel {
  readonly id: string;
  readonly displayName: string;
}

/**
 * The custom levels of a server's configuration, checked: an array of level objects, each with an id, ids unique
 * without case. A wrong one is a TypeError naming `where` and the item (`qualityLevels[1].passes must be ...`).
 */
export function checkQualityLevels(value: unknown, where: string): CustomQualityLevel[] {
  if (!Array.isArray(value)) throw new TypeError(`${where} must be an array of quality levels, got ${JSON.stringify(value) ?? String(value)}`);
  const levels: CustomQualityLevel[] = [];
  value.forEach((item, index) => {
    const at = `${where}[${index}]`;
    const level = checkQuality(item, at);
    if (typeof level === 'string') throw new TypeError(`${at} must be a quality level object, got ${JSON.stringify(item)}`);
    if (level.id === undefined) throw new TypeError(`${at}.id is required: the name jobs give in quality`);
    const same = levels.findIndex((earlier) => earlier.id.toLowerCase() === level.id!.toLowerCase());
    if (same !== -1) throw new TypeError(`${at}.id ${JSON.stringify(level.id)} is the id of item ${same} too (ids are compared without case)`);
    // The price is accounted in micro-credits: refused, not rounded, past six decimal places.
    if (level.unitPrice !== undefined && toMicro(level.unitPrice) === null) {
      throw new TypeError(`${at}.unitPrice must be a number of credits from 0 to ${MAX_CREDITS} with at most six decimal places, got ${level.unitPrice}`);
    }
    levels.push({ ...level, id: level.id, displayName: level.displayName ?? level.id });
  });
  return levels;
}

