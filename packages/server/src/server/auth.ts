/**
 * Who a request comes from: HTTP Basic (RFC 7617) with root's or a user's username and password (a BrowserApp: its
 * key and an empty password), a bearer token (RFC 7519, HS256) from POST /auth/tokens, or, without an
 * `Authorization` header, a TLS client certificate that verified against the configured CA (CN = a Standard user's
 * username). Every request reads the user's current record: a user made inactive, deleted, or whose password changed
 * is refused from its next request on, tokens already issued included.
 *
 * - Tokens carry `sub` (the user's id), `iat`, `exp` and `jti`; a user's also `pv`, the password version it was issued
 *   under, root's `pwd`, a keyed digest of root's username and password (HMAC with the signing secret, so it tells
 *   nothing of them). A user with an enrolled TOTP gets a first-factor token first (`service:mfa` and `verifalia:mfa`
 *   = ["totp"], 5 minutes), good for POST /auth/totp/verifications only.
 * - Failed sign-ins (wrong password, unknown username) are limited per username and per client IP (429); an unknown
 *   username costs a hash verification as a wrong password does, so neither the answer nor its time tells whether a
 *   username exists.
 * - A verified Basic credential is remembered for 60 s under a keyed hash (no hash verification on each request of a
 *   client that sends it every time), and used only while the user's record is as it was then.
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { SignJWT, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { verifyAgainstDummy, verifyPassword } from '../accounts/passwords.js';
import { RememberedCredentials } from '../accounts/remembered-credentials.js';
import { SignInLimiter, type SignInLimits } from '../accounts/sign-in-limits.js';
import type { UserRecord, UserStore } from '../accounts/types.js';
import type { Principal } from './access.js';
import { verifiedClientName } from './client-certificate.js';
import { ProblemError, tooManyRequests } from './problems.js';

export interface RootAccount {
  /** A stable UUID kept with the data: the owner of its jobs and the `sub` of its tokens. */
  readonly id: string;
  readonly username: string;
  readonly password: string;
}

/** The authenticated caller of a request. */
export type User = Principal;

/** What a first-factor token allows: the TOTP step of its user's sign-in, nothing else. */
export interface FirstFactor {
  readonly user: UserRecord;
  /** The token's id: wrong codes are counted per token. */
  readonly tokenId: string;
  /** When the token expires (milliseconds since the epoch). */
  readonly expiresAt: number;
}

export interface AuthenticatorOptions {
  readonly root: RootAccount;
  readonly users: UserStore;
  /** The signing secret of tokens. */
  readonly secret: string;
  readonly tokenLifetimeMs: number;
  /**
   * Whether verified client certificates sign in (the server was given its own client CA). Never otherwise: a host
   * app that asks for certificates against the public CAs would let any publicly issued certificate name a user.
   */
  readonly clientCertificates: boolean;
  /** Where failed sign-ins are counted (default: this process's memory). */
  readonly signInLimits?: SignInLimits;
}

/** The factors a first-factor token names (the claim's name in the interface, and the one the official clients read). */
const MFA_CLAIMS = ['service:mfa', 'verifalia:mfa'] as const;
const FIRST_FACTOR_LIFETIME_MS = 5 * 60_000;
const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="mailverify"' };

export function unauthorized(detail: string): ProblemError {
  return new ProblemError(401, detail, '/problems/unauthorized', CHALLENGE);
}

const WRONG_CREDENTIALS = 'Wrong username or password.';
const BAD_TOKEN = 'The bearer token is not valid or has expired.';

/** Equal strings, in time that depends on neither (both are hashed to 32 bytes first). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Whether the user may sign in at all: active, not deleted. */
const canSignIn = (user: UserRecord): boolean => user.detail.isActive && user.deletedOn === undefined;

export class Authenticator {
  readonly limiter: SignInLimits;
  readonly remembered = new RememberedCredentials();
  /** Sign-ins being checked, by credentials and address (signIn). */
  private readonly signingIn = new Map<string, Promise<Principal>>();
  private readonly key: Uint8Array;
  private readonly root: RootAccount;
  private readonly users: UserStore;
  private readonly tokenLifetimeMs: number;
  private readonly clientCertificates: boolean;
  /**
   * Tokens whose signature and claims verified, with their payload, until they expire: a client sends the same token
   * on every request, and WebCrypto's HMAC verification is asynchronous (a trip through the thread pool) each time.
   * What the token's user may do is still read from its current record at every request.
   */
  private readonly verified = new LRUCache<string, JWTPayload>({ max: 10_000 });
  /** The digest of root's current credentials that its tokens carry (`pwd`): tokens of earlier ones do not match. */
  private readonly rootTag: string;

  constructor(options: AuthenticatorOptions) {
    this.root = options.root;
    this.users = options.users;
    this.limiter = options.signInLimits ?? new SignInLimiter();
    this.tokenLifetimeMs = options.tokenLifetimeMs;
    this.clientCertificates = options.clientCertificates;
    this.key = new TextEncoder().encode(options.secret);
    this.rootTag = createHmac('sha256', options.secret)
      .update(`root credentials\0${this.root.username}\0${this.root.password}`, 'utf8')
      .digest('base64url')
      .slice(0, 22);
  }

  /**
   * The caller of a request; a 401 problem (429 while its username or address is locked out) otherwise. The
   * `Authorization` header decides when there is one; a client certificate counts only without it.
   */
  async authenticate(request: FastifyRequest): Promise<Principal> {
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      const name = this.clientCertificates ? verifiedClientName(request) : undefined;
      if (name !== undefined) return this.certificateUser(name);
      throw unauthorized('Credentials are required: HTTP Basic, a bearer token or a client certificate.');
    }
    const space = header.indexOf(' ');
    const scheme = header.slice(0, space < 0 ? header.length : space).toLowerCase();
    const value = space < 0 ? '' : header.slice(space + 1).trim();
    if (scheme === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw unauthorized('Malformed Basic credentials.');
      const principal = await this.signIn(decoded.slice(0, colon), decoded.slice(colon + 1), clientAddress(request));
      // A user whose password needs a second factor signs in through tokens only.
      if (principal.user?.detail.authentication.password.isMfaRequired === true) {
        throw unauthorized('This user needs a second factor: sign in with POST /auth/tokens, then its TOTP step.');
      }
      return principal;
    }
    if (scheme === 'bearer') {
      const payload = await this.verifyToken(value);
      if (MFA_CLAIMS.some((claim) => payload[claim] !== undefined)) {
        throw unauthorized('This token is good for the second factor only (POST /auth/totp/verifications).');
      }
      return this.tokenPrincipal(payload);
    }
    throw unauthorized('Unsupported authorization scheme: use Basic or Bearer.');
  }

  /** The first-factor token of a request to the TOTP step; a 401 problem otherwise. */
  async firstFactor(request: FastifyRequest): Promise<FirstFactor> {
    const header = request.headers.authorization ?? '';
    const match = /^bearer\s+(\S+)\s*$/i.exec(header);
    if (match === null) throw unauthorized('The first-factor bearer token of POST /auth/tokens is required.');
    const payload = await this.verifyToken(match[1]!);
    if (!MFA_CLAIMS.every((claim) => Array.isArray(payload[claim]))) throw unauthorized('This token is not a first-factor token.');
    const principal = await this.tokenPrincipal(payload);
    if (principal.user === undefined || principal.user.totp?.secret === undefined) throw unauthorized(BAD_TOKEN);
    return { user: principal.user, tokenId: String(payload.jti), expiresAt: (payload.exp ?? 0) * 1000 };
  }

  /**
   * The caller a username and password sign in as (root, or a user who may sign in with a password); 429 while the
   * username or the address is locked out, 401 otherwise. Every wrong password and unknown username counts, and takes
   * its place in the count before it is checked. Concurrent sign-ins with the same credentials from one address share
   * one check: a client sending many requests at once with its password takes one place, not one each (which would
   * lock it out by itself once ten were in flight).
   */
  signIn(username: string, password: string, address: string): Promise<Principal> {
    const key = `${this.remembered.keyOf(username, password)}\0${address}`;
    const running = this.signingIn.get(key);
    if (running !== undefined) return running;
    const check = this.checkSignIn(username, password, address).finally(() => this.signingIn.delete(key));
    this.signingIn.set(key, check);
    return check;
  }

  private async checkSignIn(username: string, password: string, address: string): Promise<Principal> {
    const reservation = await this.limiter.reserve(username, address);
    if ('retryAfterSeconds' in reservation) throw tooManyRequests('Too many failed sign-ins', reservation.retryAfterSeconds * 1000);
    const { attempt } = reservation;
    try {
      const principal = await this.verifyCredentials(username, password);
      if (principal === null) {
        await attempt.failed();
        throw unauthorized(WRONG_CREDENTIALS);
      }
      await attempt.release();
      // The right password of an inactive user is not a failure; it signs in as no one all the same.
      if (principal.user !== undefined && !canSignIn(principal.user)) throw unauthorized(WRONG_CREDENTIALS);
      return principal;
    } finally {
      // A check that could not be made (the store failed): its place is given back (a no-op once settled).
      await attempt.release();
    }
  }

  /** Who `username` and `password` are, or null when they are wrong (an unknown username included, in the same time). */
  private async verifyCredentials(username: string, password: string): Promise<Principal | null> {
    if (sameSecret(username, this.root.username)) {
      if (sameSecret(password, this.root.password)) return { id: this.root.id, isRoot: true };
      // As long as a user's wrong password takes.
      await verifyAgainstDummy(password);
      return null;
    }
    const user = await this.users.userByUsername(username);
    const password_ = user?.detail.authentication.password;
    if (user === null || password_ === undefined || !password_.isEnabled) {
      await verifyAgainstDummy(password);
      return null;
    }
    if (user.detail.type === 'BrowserApp') {
      // Passwordless: the key is the username, and the password is empty.
      if (password !== '') return null;
    } else if (!this.recalled(username, password, user)) {
      if (user.passwordHash === undefined || !(await verifyPassword(user.passwordHash, password))) return null;
      this.remembered.remember(username, password, user.id, { passwordVersion: user.passwordVersion, etag: user.etag });
    }
    return { id: user.id, isRoot: false, user };
  }

  /** A signed access token for `principal`: a first-factor one when the user has a TOTP enrolled. */
  issueToken(principal: Principal): Promise<string> {
    const user = principal.user;
    if (user?.totp?.secret !== undefined) {
      const factors = { 'service:mfa': ['totp'], 'verifalia:mfa': ['totp'] };
      return this.sign(principal, { ...factors, pv: user.passwordVersion }, FIRST_FACTOR_LIFETIME_MS);
    }
    return this.fullToken(principal);
  }

  /** A signed access token without a factor left to give. */
  fullToken(principal: Principal): Promise<string> {
    const claims = principal.user === undefined ? { pwd: this.rootTag } : { pv: principal.user.passwordVersion };
    return this.sign(principal, claims, this.tokenLifetimeMs);
  }

  /** Forgets what was remembered of a user: called whenever the user changes. */
  userChanged(userId: string): void {
    this.remembered.forgetUser(userId);
  }

  private recalled(username: string, password: string, user: UserRecord): boolean {
    const known = this.remembered.recall(username, password);
    return known !== undefined && known.userId === user.id && known.passwordVersion === user.passwordVersion && known.etag === user.etag;
  }

  private sign(principal: Principal, claims: Record<string, unknown>, lifetimeMs: number): Promise<string> {
    const now = Date.now();
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(principal.id)
      .setJti(randomUUID())
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor((now + lifetimeMs) / 1000))
      .sign(this.key);
  }

  private async verifyToken(token: string): Promise<JWTPayload> {
    const known = this.verified.get(token);
    if (known !== undefined && (known.exp ?? 0) * 1000 > Date.now()) return known;
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], requiredClaims: ['sub', 'iat', 'exp', 'jti'] });
      this.verified.set(token, payload);
      return payload;
    } catch {
      // Expired, forged, `alg: none`, signed with another key, malformed: the same answer for all.
      throw unauthorized(BAD_TOKEN);
    }
  }

  /** The caller a verified token names, from its current record. */
  private async tokenPrincipal(payload: JWTPayload): Promise<Principal> {
    if (payload.sub === this.root.id) {
      if (payload['pwd'] === this.rootTag) return { id: this.root.id, isRoot: true };
      throw unauthorized(BAD_TOKEN);
    }
    const user = payload.sub === undefined ? null : await this.users.getUser(payload.sub);
    if (user === null || !canSignIn(user) || payload['pv'] !== user.passwordVersion) throw unauthorized(BAD_TOKEN);
    return { id: user.id, isRoot: false, user };
  }

  /** The Standard user a verified client certificate names, if it may sign in with one. */
  private async certificateUser(name: string): Promise<Principal> {
    const user = await this.users.userByUsername(name);
    if (user === null || user.detail.type !== 'Standard' || !user.detail.authentication.certificate.isEnabled || !canSignIn(user)) {
      throw unauthorized('The client certificate names no user who may sign in with it.');
    }
    return { id: user.id, isRoot: false, user };
  }
}

/** The client's address; an IPv4-mapped IPv6 address in its IPv4 form. */
export function clientAddress(request: FastifyRequest): string {
  const ip = request.ip;
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}
