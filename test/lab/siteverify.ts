// A CAPTCHA providers' siteverify lab on loopback: one HTTP server with the endpoint of each provider, answering as
// its documentation says, and recording every form it received.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type LabProvider = 'turnstile' | 'reCaptchaV2' | 'reCaptchaV3' | 'hCaptcha';

/** The path of each provider's endpoint on the lab. */
const PATHS: Record<LabProvider, string> = {
  turnstile: '/turnstile/v0/siteverify',
  reCaptchaV2: '/recaptcha-v2/api/siteverify',
  reCaptchaV3: '/recaptcha-v3/api/siteverify',
  hCaptcha: '/hcaptcha/siteverify',
};

/** How the lab answers a token it issued. */
export interface TokenBehaviour {
  /** reCAPTCHA v3 (and hCaptcha Enterprise): the score in the answer (default 0.9 for v3, none for hCaptcha). */
  readonly score?: number;
  /** Answer `success: false` with these error codes. */
  readonly refuse?: readonly string[];
  /** Answer this status with a short text body instead (with `body`: that body). */
  readonly status?: number;
  /** With `status`: a `Location` header (a redirect). */
  readonly location?: string;
  /** Answer 200 (or `status`) with this body, as is. */
  readonly body?: string;
  /** Answer after this delay (cut short when the client goes or the lab closes). */
  readonly delayMs?: number;
}

/** A form the lab received. */
export interface SiteverifyCall {
  readonly provider: LabProvider | null;
  readonly contentType: string | undefined;
  readonly form: Record<string, string>;
}

export interface SiteverifyLab {
  /** The siteverify URL of each provider. */
  readonly urls: Record<LabProvider, string>;
  readonly calls: SiteverifyCall[];
  /** A new token the lab accepts (every time it is asked: replays are for the server to refuse) for `provider`. */
  issue(provider: LabProvider, behaviour?: TokenBehaviour): string;
  /** The calls that carried `token`. */
  callsWith(token: string): SiteverifyCall[];
  close(): Promise<void>;
}

export async function startSiteverifyLab(): Promise<SiteverifyLab> {
  const tokens = new Map<string, { provider: LabProvider; behaviour: TokenBehaviour }>();
  const calls: SiteverifyCall[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const answer = (request: IncomingMessage, response: ServerResponse, body: string): void => {
    const provider = (Object.keys(PATHS) as LabProvider[]).find((name) => PATHS[name] === request.url) ?? null;
    const form = Object.fromEntries(new URLSearchParams(body));
    calls.push({ provider, contentType: request.headers['content-type'], form });
    if (provider === null || request.method !== 'POST') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const issued = tokens.get(form['response'] ?? '');
    const behaviour = issued?.provider === provider ? issued.behaviour : { refuse: ['invalid-input-response'] };
    const send = (): void => {
      if (behaviour.status !== undefined && behaviour.body !== undefined) {
        response.writeHead(behaviour.status, { 'content-type': 'application/json' }).end(behaviour.body);
      } else if (behaviour.status !== undefined) {
        const location = behaviour.location === undefined ? {} : { location: behaviour.location };
        response.writeHead(behaviour.status, { 'content-type': 'text/plain', ...location }).end('provider trouble');
      } else if (behaviour.body !== undefined) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(behaviour.body);
      } else {
        const json = JSON.stringify(documented(provider, behaviour));
        response.writeHead(200, { 'content-type': 'application/json' }).end(json);
      }
    };
    if (behaviour.delayMs === undefined) return send();
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!response.destroyed) send();
    }, behaviour.delayMs);
    timers.add(timer);
    response.on('close', () => {
      clearTimeout(timer);
      timers.delete(timer);
    });
  };

  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => answer(request, response, body));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const urls = Object.fromEntries((Object.keys(PATHS) as LabProvider[]).map((name) => [name, `${origin}${PATHS[name]}`])) as Record<LabProvider, string>;

  return {
    urls,
    calls,
    issue(provider, behaviour = {}) {
      const token = `${provider}.${randomBytes(24).toString('base64url')}`;
      tokens.set(token, { provider, behaviour });
      return token;
    },
    callsWith: (token) => calls.filter((call) => call.form['response'] === token),
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** The answer each provider documents for a token, accepted or refused. */
function documented(provider: LabProvider, behaviour: TokenBehaviour): Record<string, unknown> {
  const success = behaviour.refuse === undefined;
  const codes = behaviour.refuse ?? [];
  const solved = { challenge_ts: new Date().toISOString(), hostname: 'shop.example.com' };
  switch (provider) {
    case 'turnstile':
      // Turnstile always sends error-codes (empty on success), and the widget's action and cdata.
      return { success, 'error-codes': codes, ...(success && { ...solved, action: 'submit', cdata: '' }) };
    case 'reCaptchaV2':
      return { success, ...(success && solved), ...(!success && { 'error-codes': codes }) };
    case 'reCaptchaV3':
      return { success, ...(success && { ...solved, score: behaviour.score ?? 0.9, action: 'submit' }), ...(!success && { 'error-codes': codes }) };
    case 'hCaptcha':
      return { success, ...(success && { ...solved, credit: false }), ...(behaviour.score !== undefined && { score: behaviour.score }), ...(!success && { 'error-codes': codes }) };
  }
}

/** A TCP port on loopback where nothing listens (bound, then closed): a provider that cannot be reached. */
export async function closedTcpPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
