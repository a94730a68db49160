/**
 * A BrowserApp's trusted origins: expressions matched against the whole serialized origin of a request (RFC 6454
 * §6.2: `scheme://host[:port]`, the port left out when it is the scheme's default, as browsers send it in `Origin`),
 * case-insensitively, `*` standing for any run of characters (none included) and `?` for exactly one. Plain functions,
 * no HTTP. Expressions are never turned into regular expressions: the matcher
 * (packages/mailverify/src/text/wildcard.ts) takes time proportional to the product of the two lengths at worst,
 * whatever the expression.
 */
import { wildcardMatches } from 'mailverify/internal';

/** The default port of the schemes a browser page has an origin in. */
const DEFAULT_PORTS: Record<string, string> = { http: '80', https: '443' };

/** No serialized origin is longer (a host name has at most 253 characters): longer texts match nothing. */
const MAX_ORIGIN_LENGTH = 512;

/**
 * RFC 6454 §7.1 `serialized-origin` = scheme "://" host [ ":" port ]: the host a name or registered name (no `/`, `?`,
 * `#`, `@`, `:`, brackets or white space) or a bracketed IPv6 literal. One pass, no backtracking (the host stops at the
 * first `:`).
 */
const SERIALIZED_ORIGIN = /^([a-z][a-z0-9+.-]*):\/\/(\[[0-9a-f:.]+\]|[^/?#@[\]:\s]+)(?::(\d{1,5}))?$/i;

/**
 * The origin an `Origin` header names, in lower case and without the scheme's default port
 * (`HTTPS://Shop.Example.com:443` is `https://shop.example.com`); null when there is none: no header, `null` (an opaque
 * origin: a sandboxed frame, a file, a redirect across origins), a list, or anything that is not a serialized origin.
 */
export function serializedOrigin(header: string | undefined): string | null {
  if (header === undefined || header.length > MAX_ORIGIN_LENGTH) return null;
  const match = SERIALIZED_ORIGIN.exec(header.trim());
  if (match === null) return null;
  const scheme = match[1]!.toLowerCase();
  const host = match[2]!.toLowerCase();
  const portText = match[3];
  if (portText === undefined) return `${scheme}://${host}`;
  const port = Number(portText);
  if (port > 65535) return null;
  return DEFAULT_PORTS[scheme] === String(port) ? `${scheme}://${host}` : `${scheme}://${host}:${port}`;
}

/**
 * An expression in the form it is matched in: lower case, without the default port of its scheme or a trailing `/`
 * (`https://shop.example.com:443/` is `https://shop.example.com`, which is what a browser sends for that page).
 */
export function normalizedExpression(expression: string): string {
  let text = expression.trim().toLowerCase();
  if (text.endsWith('/')) text = text.slice(0, -1);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//.exec(text)?.[1];
  const port = scheme === undefined ? undefined : DEFAULT_PORTS[scheme];
  if (port !== undefined && text.endsWith(`:${port}`)) text = text.slice(0, -(port.length + 1));
  return text;
}

/** Whether a request with this `Origin` header comes from an origin some expression trusts. */
export function originTrusted(expressions: readonly string[], originHeader: string | undefined): boolean {
  const origin = serializedOrigin(originHeader);
  return origin !== null && expressions.some((expression) => wildcardMatches(normalizedExpression(expression), origin));
}
