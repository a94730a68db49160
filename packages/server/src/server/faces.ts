/**
 * The faces of the server for people: the web console at `<base>/console/` and the sign-up form widget at
 * `<base>/widget/`. Both are front-end files built into this package's dist/console and dist/widget (packages/server/
 * console and widget hold their sources); they are read at start, compressed once when first asked for, and answered
 * from memory, so that a request for them costs a lookup. The console is a client of the public interface only: nothing here reads a store.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';
import { ProblemError, sendProblem } from './problems.js';

/**
 * The console's pages may load and call only their own origin: no inline script or style, no other origin, no data:
 * URL; nor may another site frame them or a `<base>` element redirect their relative URLs.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

interface Asset {
  /** The file's path: the key of its compressed forms. */
  readonly path: string;
  readonly type: string;
  readonly identity: Buffer;
  readonly cacheControl: string;
}

/** A text file in gzip and Brotli, each kept only when smaller. */
interface Compressed {
  readonly gzip?: Buffer;
  readonly br?: Buffer;
}

/**
 * The compressed forms of every file, made when a client first asks for the file, once per process (every server of
 * the process shares them): Brotli at its best quality takes a moment that a server's start need not wait for.
 */
const COMPRESSED = new Map<string, Compressed>();

function compressedForms(asset: Asset): Compressed {
  let forms = COMPRESSED.get(asset.path);
  if (forms === undefined) {
    const { identity } = asset;
    const text = /^(text|application\/json|image\/svg)/.test(asset.type);
    const gzip = text ? gzipSync(identity, { level: 9 }) : undefined;
    const br = text ? brotliCompressSync(identity, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } }) : undefined;
    forms = {
      ...(gzip !== undefined && gzip.length < identity.length && { gzip }),
      ...(br !== undefined && br.length < identity.length && { br }),
    };
    COMPRESSED.set(asset.path, forms);
  }
  return forms;
}

/** The folder of a built face (`console` or `widget`) in this package's dist, found from this file up to the package root. */
export function facesFolder(face: 'console' | 'widget', from: string = fileURLToPath(import.meta.url)): string | null {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'mailverify-server') {
          const folder = join(dir, 'dist', face);
          return existsSync(folder) ? folder : null;
        }
      } catch {
        // not a package manifest we can read: keep looking up
      }
    }
    if (dirname(dir) === dir) return null;
  }
}

/** Every file under `folder`, by its path relative to it with `/` separators. */
function loadAssets(folder: string, cacheControlOf: (path: string) => string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      const key = relative(folder, path).split(sep).join('/');
      assets.set(key, { path, type: CONTENT_TYPES[extname(name)] ?? 'application/octet-stream', identity: readFileSync(path), cacheControl: cacheControlOf(key) });
    }
  };
  walk(folder);
  return assets;
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset, headers: Record<string, string>): FastifyReply {
  const forms = compressedForms(asset);
  const offered = (['br', 'gzip'] as const).filter((encoding) => forms[encoding] !== undefined);
  const encoding = offered.length === 0 ? 'identity' : new Negotiator(request).encoding([...offered, 'identity']);
  const body = encoding === 'br' || encoding === 'gzip' ? forms[encoding]! : asset.identity;
  reply.headers({ ...headers, 'content-type': asset.type, 'cache-control': asset.cacheControl, 'x-content-type-options': 'nosniff' });
  if (offered.length > 0) reply.header('vary', 'Accept-Encoding');
  // A Content-Encoding already set tells the compression plugin to leave the body as it is.
  reply.header('content-encoding', encoding === 'br' || encoding === 'gzip' ? encoding : 'identity');
  return reply.send(body);
}

/** Pages and scripts for browsers, not operations of the interface: left out of the OpenAPI document. */
const NOT_AN_OPERATION = { schema: { hide: true } };

export interface FacesOptions {
  /** The console at `<base>/console/` (default true); off, its paths are unknown (404) and `<base>/` is not redirected. */
  readonly console?: boolean;
  /** Where the built files are (default: this package's dist/console and dist/widget). */
  readonly consoleFolder?: string | null;
  readonly widgetFolder?: string | null;
}

/**
 * The console's and the widget's routes. Files missing from an installation (the package built without them) are
 * answered 404 with a problem that says so, and logged once at start.
 */
export function faceRoutes(app: FastifyInstance, base: string, options: FacesOptions = {}): void {
  const widgetFolder = options.widgetFolder === undefined ? facesFolder('widget') : options.widgetFolder;
  // The widget's files are loaded by pages of other origins: a plain <script> needs nothing, an ES module import CORS
  // (the server's CORS answers name the page's origin), and both a resource policy that lets them through.
  const widget = widgetFolder === null ? new Map<string, Asset>() : loadAssets(widgetFolder, () => 'public, max-age=3600');
  if (widgetFolder === null) app.log.warn('the widget is not built into this installation: /widget/ answers 404');
  app.get(`${base}/widget/:file`, NOT_AN_OPERATION, async (request, reply) => {
    const asset = widget.get((request.params as { file: string }).file);
    if (asset === undefined) return sendProblem(reply, new ProblemError(404, `No resource at ${base}/widget/${(request.params as { file: string }).file.slice(0, 100)}.`));
    return send(request, reply, asset, { 'cross-origin-resource-policy': 'cross-origin' });
  });

  if (options.console === false) return;
  const consoleFolder = options.consoleFolder === undefined ? facesFolder('console') : options.consoleFolder;
  // Built file names carry a hash of their content (assets/index-3f9a.js): kept for a year; the page itself is asked
  // again each time, so that a new version is seen at once.
  const pages =
    consoleFolder === null
      ? new Map<string, Asset>()
      : loadAssets(consoleFolder, (path) => (path.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache'));
  if (consoleFolder === null) app.log.warn('the console is not built into this installation: /console/ answers 404');
  const consoleHeaders = {
    'content-security-policy': CONSOLE_CONTENT_SECURITY_POLICY,
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
  };
  const serveConsole = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const path = (request.params as { '*'?: string })['*'] ?? '';
    const asset = pages.get(path === '' ? 'index.html' : path);
    if (asset === undefined) {
      const detail = pages.size === 0 ? 'The console is not built into this installation of mailverify-server.' : `No resource at ${base}/console/${path.slice(0, 100)}.`;
      return sendProblem(reply, new ProblemError(404, detail));
    }
    return send(request, reply, asset, consoleHeaders);
  };
  app.get(`${base}/console/*`, NOT_AN_OPERATION, serveConsole);
  // Relative asset URLs need the trailing slash.
  app.get(`${base}/console`, NOT_AN_OPERATION, async (_request, reply) => reply.redirect(`${base}/console/`, 308));
  app.get(`${base}/`, NOT_AN_OPERATION, async (_request, reply) => reply.redirect(`${base}/console/`, 302));
  if (base !== '') app.get(base, NOT_AN_OPERATION, async (_request, reply) => reply.redirect(`${base}/console/`, 302));
}
