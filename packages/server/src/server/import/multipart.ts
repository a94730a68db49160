/**
 * The parts of a multipart/form-data request (RFC 7578): the `inputFile` part is written to a file on disk as it
 * arrives (at most `maxFileBytes`), the `settings` part is kept as text, others are read and dropped. The parts are
 * read with busboy's multipart parser (Dicer), which hands over each part's headers whole: the file's type and its
 * `charset` parameter both come from the part's Content-Type.
 */
import { createWriteStream } from 'node:fs';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Dicer from '@fastify/busboy/deps/dicer/lib/Dicer.js';
import parseParams from '@fastify/busboy/lib/utils/parseParams.js';
import { ProblemError, invalidField } from '../problems.js';

export interface UploadedFile {
  readonly path: string;
  readonly size: number;
  /** The part's media type, lower case, without parameters; `text/plain` when the part has no Content-Type. */
  readonly mediaType: string;
  /** The `charset` parameter, lower case, when given. */
  readonly charset?: string;
}

export interface Upload {
  readonly file?: UploadedFile;
  readonly settings?: string;
}

/**
 * The `settings` part is a small JSON object: 1 MiB is far more than it needs. A part the server does not use is read
 * and dropped up to the same size: past it, 413, rather than reading whatever a client sends to its end.
 */
const MAX_SMALL_PART_BYTES = 1 << 20;
/** Parts per request: `inputFile`, `settings` and a few a client may add. */
const MAX_PARTS = 32;

/** The boundary of a multipart/form-data Content-Type, or undefined. */
function boundaryOf(contentType: string): string | undefined {
  const params = parseParams(contentType) as Array<string | [string, string]>;
  for (const param of params.slice(1)) {
    if (Array.isArray(param) && param[0].toLowerCase() === 'boundary' && param[1] !== '') return param[1];
  }
  return undefined;
}

/** A header's media type (lower case) and its parameters (names lower case). */
function parseHeader(value: string): { value: string; params: Map<string, string> } {
  const parsed = parseParams(value) as Array<string | [string, string]>;
  const first = parsed[0];
  const params = new Map<string, string>();
  for (const param of parsed.slice(1)) if (Array.isArray(param)) params.set(param[0].toLowerCase(), param[1]);
  return { value: typeof first === 'string' ? first.trim().toLowerCase() : '', params };
}

/**
 * Reads the request's parts; the file goes to `filePath`. Rejects with a problem: 400 for a malformed body or a
 * second `inputFile`, 413 for a file or a part larger than allowed.
 */
export function receiveUpload(raw: Readable, contentType: string, filePath: string, maxFileBytes: number): Promise<Upload> {
  const boundary = boundaryOf(contentType);
  if (boundary === undefined) throw new ProblemError(400, 'The multipart/form-data Content-Type has no boundary.');
  return new Promise((resolve, reject) => {
    const dicer = new Dicer({ boundary, maxHeaderPairs: 64 });
    const tasks: Promise<void>[] = [];
    let file: UploadedFile | undefined;
    let settings: string | undefined;
    const open = new Set<Readable>();
    let parts = 0;
    let failed = false;

    const fail = (error: unknown): void => {
      if (failed) return;
      failed = true;
      raw.unpipe(dicer);
      for (const part of open) part.destroy();
      // The rest of the request is not read: the connection closes after the answer.
      reject(error instanceof ProblemError ? withClose(error) : error);
    };

    const handle = async (part: Readable, header: Record<string, string[] | undefined>): Promise<void> => {
      const disposition = parseHeader(header['content-disposition']?.[0] ?? '');
      const name = disposition.params.get('name');
      if (disposition.value !== 'form-data' || name === undefined) {
        await readSmallPart(part, 'a part without a form-data name', false);
        return;
      }
      if (name === 'inputFile') {
        if (file !== undefined) throw invalidField('inputFile', 'give one inputFile part');
        const type = parseHeader(header['content-type']?.[0] ?? 'text/plain');
        const charset = type.params.get('charset')?.toLowerCase();
        let size = 0;
        const limit = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            size += chunk.length;
            if (size > maxFileBytes) done(new ProblemError(413, `inputFile: the file is larger than ${maxFileBytes} bytes.`));
            else done(null, chunk);
          },
        });
        file = { path: filePath, size: 0, mediaType: type.value, ...(charset !== undefined && { charset }) };
        await pipeline(part, limit, createWriteStream(filePath));
        file = { ...file, size };
      } else if (name === 'settings') {
        if (settings !== undefined) throw invalidField('settings', 'give one settings part');
        settings = '';
        settings = await readText(part, 'settings');
      } else {
        await readSmallPart(part, `the part ${JSON.stringify(name.slice(0, 64))}, which this server does not use,`, false);
      }
    };

    dicer.on('part', (part: Readable) => {
      if (++parts > MAX_PARTS) {
        part.resume();
        fail(new ProblemError(413, `The request has more than ${MAX_PARTS} parts.`));
        return;
      }
      part.on('error', () => {}); // Reported by the parser itself ("unexpected end").
      open.add(part);
      part.once('close', () => open.delete(part));
      part.once('end', () => open.delete(part));
      part.once('header', (header: Record<string, string[] | undefined>) => tasks.push(handle(part, header).catch(fail)));
    });
    dicer.on('finish', () => {
      void Promise.all(tasks).then(() => {
        if (!failed) resolve({ ...(file !== undefined && { file }), ...(settings !== undefined && { settings }) });
      });
    });
    dicer.on('error', (error: Error) => fail(new ProblemError(400, `The multipart/form-data body is malformed: ${error.message}.`)));
    raw.on('error', fail);
    raw.pipe(dicer);
  });
}

/** A small part read to its end, its bytes kept or dropped; 413 past MAX_SMALL_PART_BYTES. */
async function readSmallPart(part: Readable, what: string, keep: boolean): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of part as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_SMALL_PART_BYTES) throw new ProblemError(413, `${what} is larger than ${MAX_SMALL_PART_BYTES} bytes.`);
    if (keep) chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A small part's content as UTF-8 text; 400 if it is not UTF-8, 413 past 1 MiB. */
async function readText(part: Readable, name: string): Promise<string> {
  const bytes = await readSmallPart(part, `${name}: the part`, true);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalidField(name, 'must be UTF-8 text');
  }
}

function withClose(problem: ProblemError): ProblemError {
  return new ProblemError(problem.status, problem.detail, problem.type, { ...problem.headers, Connection: 'close' });
}
