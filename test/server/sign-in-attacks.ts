// Attacks on sign-in limits, as a separate process would make them against real `mailverify serve` processes: bursts
// of concurrent wrong passwords (Basic and POST /auth/tokens) for one username and from one address, TOTP codes
// guessed with fresh first-factor tokens, and a username spelled with the Kelvin sign. The same suite runs on one
// embedded server (test/server/sign-in-attacks.test.ts) and on a cluster of two API servers sharing PostgreSQL and
// Redis, requests alternating between them (test/cluster/sign-in-attacks.test.ts).
//
// Each attack comes from a client address of its own (127.0.0.x as the connection's source address), so that the
// per-address limit of one attack never blocks another, nor root's setup requests from 127.0.0.1.
import { request as httpRequest } from 'node:http';
import { TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';

export interface SignInTarget {
  /** The servers' origins (`http://127.0.0.1:PORT`): one, or two API servers of one cluster. */
  readonly origins: readonly string[];
  readonly rootPassword: string;
}

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: any;
}

const basic = (username: string, password: string): string => `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;

/** One request from the source address `from` (127.0.0.x), its answer read whole. */
function send(origin: string, method: string, path: string, options: { from: string; auth?: string; json?: unknown }): Promise<Reply> {
  const url = new URL(path, origin);
  const body = options.json === undefined ? undefined : Buffer.from(JSON.stringify(options.json));
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        localAddress: options.from,
        // A connection per request: concurrent requests arrive together, not one after the other on a kept socket.
        agent: false,
        headers: {
          ...(options.auth !== undefined && { authorization: options.auth }),
          ...(body !== undefined && { 'content-type': 'application/json', 'content-length': String(body.length) }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** How many answers had each status. */
function tally(replies: readonly Reply[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of replies) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

export function signInAttacks(target: () => SignInTarget): void {
  let users = 0;
  /** The i-th server of the target, requests alternating between them. */
  const origin = (i: number): string => target().origins[i % target().origins.length]!;
  const root = (): string => basic('root', target().rootPassword);

  /** A Standard user made by root (from 127.0.0.1), with `username` and `password`; its id. */
  async function createUser(username: string, password: string): Promise<string> {
    const made = await send(origin(users++), 'POST', '/v2.7/users', {
      from: '127.0.0.1',
      auth: root(),
      json: { type: 'Standard', displayName: username, authentication: { password: { username, password } } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    return made.body.id as string;
  }

  /** A Basic sign-in as `username` (GET of the job list), or a token request, from `from` through server `i`. */
  const signIn = (i: number, how: 'basic' | 'token', username: string, password: string, from: string): Promise<Reply> =>
    how === 'basic'
      ? send(origin(i), 'GET', '/v2.7/email-validations', { from, auth: basic(username, password) })
      : send(origin(i), 'POST', '/v2.7/auth/tokens', { from, json: { username, password } });

  const expectLockedOut = (reply: Reply): void => {
    expect(reply.status).toBe(429);
    expect(reply.body).toMatchObject({ status: 429, type: '/problems/too-many-requests' });
    expect(Number(reply.headers['retry-after'])).toBeGreaterThan(60);
  };

  describe('sign-in limits under attack', () => {
    for (const how of ['basic', 'token'] as const) {
      it(`60 simultaneous wrong ${how === 'basic' ? 'Basic' : '/auth/tokens'} passwords for one username: 10 are checked, the rest 429; then the right one is 429 too`, async () => {
        const username = `burst-${how}`;
        const password = `the right password of ${username}`;
        await createUser(username, password);
        // Each from an address of its own: only the username's limit is in play.
        const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => signIn(i, how, username, `wrong guess ${i}`, `127.0.1.${i + 1}`)));
        expect(tally(replies)).toEqual({ 401: 10, 429: 50 });
        for (const reply of replies.filter((r) => r.status === 429)) expect(reply.body).toMatchObject({ type: '/problems/too-many-requests' });
        for (let i = 0; i < target().origins.length; i++) expectLockedOut(await signIn(i, how, username, password, '127.0.1.100'));
      });
    }

    it('a right password among 300 simultaneous guesses: at most 10 wrong ones are checked, and after them it is refused', async () => {
      const username = 'burst-mixed';
      const password = 'the right password of burst-mixed';
      await createUser(username, password);
      const guesses = Array.from({ length: 300 }, (_, i) => (i === 150 ? password : `wrong guess ${i}`));
      const replies = await Promise.all(guesses.map((guess, i) => signIn(i, i % 3 === 0 ? 'token' : 'basic', username, guess, `127.0.2.${(i % 250) + 1}`)));
      const counts = tally(replies);
      // The right guess signs in only when it came among the first ten places (it then gives its place back).
      expect(counts[401]).toBe(10);
      expect((counts[200] ?? 0) + counts[401]! + counts[429]!).toBe(300);
      expect(counts[200] ?? 0).toBeLessThanOrEqual(1);
      expectLockedOut(await signIn(1, 'basic', username, password, '127.0.2.251'));
    });

    it('150 simultaneous failures from one address (unknown usernames): 100 are checked, then the address is refused', async () => {
      const replies = await Promise.all(Array.from({ length: 150 }, (_, i) => signIn(i, i % 2 === 0 ? 'basic' : 'token', `nobody-${i}`, 'wrong', '127.0.3.1')));
      expect(tally(replies)).toEqual({ 401: 100, 429: 50 });
      // A real user's right password from that address is refused too; from another address it signs in.
      const username = 'behind-the-attacker';
      const password = 'the password of behind-the-attacker';
      await createUser(username, password);
      expectLockedOut(await signIn(0, 'token', username, password, '127.0.3.1'));
      expect((await signIn(1, 'token', username, password, '127.0.3.2')).status).toBe(200);
    });

    it('concurrent sign-ins with the same right password (a client sending many requests at once) all pass', async () => {
      const username = 'busy-client';
      const password = 'the password of busy-client';
      await createUser(username, password);
      const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => signIn(i, 'basic', username, password, '127.0.4.1')));
      expect(tally(replies)).toEqual({ 200: 40 });
    });

    it('the Kelvin sign does not escape a lockout: \\u212Ailo-desk is no username of kilo-desk, which stays locked', async () => {
      const username = 'kilo-desk';
      const password = 'the password of kilo-desk';
      await createUser(username, password);
      for (let i = 0; i < 10; i++) expect((await signIn(i, 'basic', username, `wrong ${i}`, `127.0.5.${i + 1}`)).status).toBe(401);
      for (let i = 0; i < target().origins.length; i++) {
        expectLockedOut(await signIn(i, 'basic', username, password, '127.0.5.20'));
        expectLockedOut(await signIn(i, 'token', 'KILO-DESK', password, '127.0.5.20'));
        // Not a spelling of the locked username: no user has it (usernames are ASCII), whatever the password.
        expect((await signIn(i, 'basic', '\u212Ailo-desk', password, '127.0.5.20')).status).toBe(401);
        expect((await signIn(i, 'token', '\u212Ailo-desk', password, '127.0.5.20')).status).toBe(401);
      }
    });

    it('TOTP: wrong codes count per user across first-factor tokens; the 11th is 429, and so is the right code then', async () => {
      const username = 'totp-target';
      const password = 'the password of totp-target';
      const id = await createUser(username, password);
      const enrolment = await send(origin(0), 'POST', `/v2.7/users/${id}/authentication/totp`, { from: '127.0.0.1', auth: root() });
      expect(enrolment.status).toBe(200);
      const totp = new TOTP({ secret: enrolment.body.secret as string });
      const confirmed = await send(origin(1), 'POST', `/v2.7/users/${id}/authentication/totp/confirmations`, {
        from: '127.0.0.1',
        auth: root(),
        json: { passCode: totp.generate() },
      });
      expect(confirmed.status).toBe(200);
      const wrongCode = (): string => String((Number(totp.generate()) + 500_000) % 1_000_000).padStart(6, '0');
      /** A first-factor token from the password, as the attacker who knows it gets one for each few codes. */
      const firstFactor = async (i: number): Promise<string> => {
        const reply = await signIn(i, 'token', username, password, '127.0.6.1');
        expect(reply.status).toBe(200);
        return reply.body.accessToken as string;
      };
      const verify = (i: number, token: string, passCode: string): Promise<Reply> =>
        send(origin(i), 'POST', '/v2.7/auth/totp/verifications', { from: '127.0.6.1', auth: `Bearer ${token}`, json: { passCode } });
      // 40 wrong codes at once, four per first-factor token (one short of the token's own limit of five).
      const tokens = await Promise.all(Array.from({ length: 10 }, (_, i) => firstFactor(i)));
      const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => verify(i, tokens[i % 10]!, wrongCode())));
      const counts = tally(replies);
      expect(counts[403]).toBe(10);
      expect(counts[429]).toBe(30);
      // A new token does not help, on either server, and the right code is refused too.
      for (let i = 0; i < target().origins.length; i++) {
        const reply = await verify(i, await firstFactor(i), totp.generate());
        expectLockedOut(reply);
        expect(reply.body.detail).toMatch(/TOTP/);
      }
    });
  });
}
