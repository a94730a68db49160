/**
 * Authentication before users exist: one root account from configuration. HTTP Basic (RFC 7617) on every request, or
 * a bearer token (RFC 7519, HS256) from POST /auth/tokens with `sub` = the root account's id and `exp`. Secrets are
 * compared in constant time; no credential is ever logged or echoed.
 *
 * A token also carries `pwd`, a keyed digest of the user name and password it was issued under (HMAC with the signing
 * secret, so it tells nothing of them): a change of the root password revokes every token issued before, at once. A token
 * without `exp` is refused, whoever signed it.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { Principal } from './access.js';
import { ProblemError } from './problems.js';

export interface RootAccount {
  /** A stable UUID kept with the data: the owner of its jobs and the `sub` of its tokens. */
  readonly id: string;
  readonly username: string;
  readonly password: string;
}

/** The authenticated user of a request. */
export type User = Principal;

const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="mailverify"' };

export function unauthorized(detail: string): ProblemError {
  return new ProblemError(401, detail, '/problems/unauthorized', CHALLENGE);
}

/** Equal strings, in time that depends on neither (both are hashed to 32 bytes first). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

export class Authenticator {
  private readonly key: Uint8Array;
  /** The digest of the current password that tokens carry (`pwd`): tokens of an earlier password do not match. */
  private readonly passwordTag: string;

  constructor(
    private readonly root: RootAccount,
    secret: string,
    private readonly tokenLifetimeMs: number,
  ) {
    this.key = new TextEncoder().encode(secret);
    this.passwordTag = createHmac('sha256', secret)
      .update(`root credentials\0${root.username}\0${root.password}`, 'utf8')
      .digest('base64url')
      .slice(0, 22);
  }

  /** The user of an `Authorization` header; throws a 401 problem when it is missing or wrong. */
  async authenticate(header: string | undefined): Promise<User> {
    if (header === undefined || header === '') throw unauthorized('Credentials are required: HTTP Basic or a bearer token.');
    const space = header.indexOf(' ');
    const scheme = header.slice(0, space < 0 ? header.length : space).toLowerCase();
    const value = space < 0 ? '' : header.slice(space + 1).trim();
    if (scheme === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw unauthorized('Malformed Basic credentials.');
      return this.check(decoded.slice(0, colon), decoded.slice(colon + 1));
    }
    if (scheme === 'bearer') {
      try {
        const { payload } = await jwtVerify(value, this.key, { algorithms: ['HS256'], requiredClaims: ['sub', 'exp'] });
        if (payload.sub === this.root.id && payload['pwd'] === this.passwordTag) return { id: this.root.id, isRoot: true };
      } catch {
        // Expired, forged or malformed: the same answer for all.
      }
      throw unauthorized('The bearer token is not valid or has expired.');
    }
    throw unauthorized('Unsupported authorization scheme: use Basic or Bearer.');
  }

  /** The user of a user name and password; throws a 401 problem when they are wrong. */
  check(username: string, password: string): User {
    // Both compared, always, so the time does not tell which one was wrong.
    const userOk = sameSecret(username, this.root.username);
    const passwordOk = sameSecret(password, this.root.password);
    if (userOk && passwordOk) return { id: this.root.id, isRoot: true };
    throw unauthorized('Wrong user name or password.');
  }

  /** A signed access token for `user`. */
  issueToken(user: User): Promise<string> {
    const now = Date.now();
    return new SignJWT({ pwd: this.passwordTag })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor((now + this.tokenLifetimeMs) / 1000))
      .sign(this.key);
  }
}
