/**
 * Paging cursors: opaque to clients, signed so that a forged or altered one is refused (400). A cursor names the page
 * that answered with it (its first and last key), the listing it belongs to (a job's entries, or a user's jobs with
 * their sort), its filter and its limit: `cursor` asks for the page after that one, `cursor:prev` for the page before.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ProblemError } from './problems.js';

export interface CursorState {
  /** `entries:<job id>` or `jobs:<user id>:<sort>`. */
  readonly listing: string;
  /** The filter the listing was read with, in a canonical form. */
  readonly filter: string;
  readonly limit: number;
  /** Keys (entry index, job sequence) of the first and last item of the page. */
  readonly first: number;
  readonly last: number;
}

export class Cursors {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update('mailverify paging cursors').digest();
  }

  encode(state: CursorState): string {
    const body = Buffer.from(JSON.stringify([state.listing, state.filter, state.limit, state.first, state.last])).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** The state of a cursor for `listing`; a 400 problem when it is forged, altered or belongs elsewhere. */
  decode(cursor: string, listing: string, parameter: string): CursorState {
    const invalid = new ProblemError(400, `${parameter}: not a cursor of this listing`, '/problems/invalid-cursor');
    const dot = cursor.indexOf('.');
    if (dot < 0) throw invalid;
    const body = cursor.slice(0, dot);
    const signature = Buffer.from(cursor.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.sign(body), 'base64url');
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) throw invalid;
    let fields: unknown;
    try {
      fields = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw invalid;
    }
    if (!Array.isArray(fields) || fields.length !== 5 || fields[0] !== listing) throw invalid;
    const [, filter, limit, first, last] = fields as [string, unknown, unknown, unknown, unknown];
    if (typeof filter !== 'string' || ![limit, first, last].every(Number.isSafeInteger)) throw invalid;
    return { listing, filter, limit: limit as number, first: first as number, last: last as number };
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest().subarray(0, 16).toString('base64url');
  }
}
