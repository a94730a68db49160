// busboy's multipart parser and its header-parameter parser, which @fastify/busboy ships without declarations
// under these paths (its Dicer declarations sit in a lower-case file name that the import does not match).
declare module '@fastify/busboy/deps/dicer/lib/Dicer.js' {
  import { Writable } from 'node:stream';
  export default class Dicer extends Writable {
    constructor(config: { boundary: string; maxHeaderPairs?: number; partHwm?: number });
  }
}

declare module '@fastify/busboy/lib/utils/parseParams.js' {
  /** `value; name=param; ...` as `[value, [name, param], ...]` (RFC 2231 and quoted strings decoded). */
  export default function parseParams(header: string): Array<string | [string, string]>;
}
