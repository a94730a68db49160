/**
 * The SMTP transport interface: one session with one mail exchanger, as the probe strategy drives it. The default
 * implementation is built on nodemailer's smtp-connection (`./nodemailer-transport.ts`); a host application can pass
 * its own through `createVerifier({ smtp: { transport } })`.
 */
import type { SocksProxy } from './egress/egresses.js';
import type { SmtpReply } from './reply.js';

/** The way out a connection takes (an egress of `smtp.egress`): the system's route, from an address, or a proxy. */
export interface EgressRoute {
  readonly id: string;
  /** The source address to bind. */
  readonly localAddress?: string;
  /** A SOCKS5 proxy that connects to `host` (an IP address: the proxy never resolves a name). */
  readonly proxy?: SocksProxy;
}

export interface SmtpOpenOptions {
  /** The IP address to connect to: already resolved and vetted (global unless `allowPrivateAddresses`). */
  host: string;
  port: number;
  /** The exchanger's host name (TLS server name; empty for an address literal). */
  servername: string;
  /** The name sent with EHLO/HELO. */
  heloName: string;
  /** The egress to leave by (default: the system's route, as `localAddress` of the transport's options says). */
  egress?: EgressRoute;
  /**
   * The provider the exchanger belongs to (its profile's id, or the exchanger's host name) and its cap on connections
   * per egress, for a transport that counts connections across processes (a cluster's leases).
   */
  provider?: { readonly id: string; readonly maxConnectionsPerEgress?: number };
  /** STARTTLS when the server offers it (default true); certificates are checked only if `rejectUnauthorized`. */
  tls: { starttls: boolean; rejectUnauthorized: boolean };
  /** TCP connect, greeting, EHLO and STARTTLS together must finish within this time. */
  connectTimeoutMs: number;
  /** The default wait for the reply to each later command. */
  commandTimeoutMs: number;
  /**
   * Aborted when the work the session was opened for has been withdrawn: the opening stops where it is (rejecting with
   * `ECLOSED`) and nothing more is written. A transport that ignores it lets the prober close the session unused.
   */
  signal?: AbortSignal;
}

export interface SmtpCommandOptions {
  /** The wait for this command's reply, instead of `commandTimeoutMs`. */
  timeoutMs?: number;
}

/**
 * An open session, after the greeting and EHLO (or HELO) and, where offered, STARTTLS.
 *
 * Commands may be issued without waiting for earlier replies: when the server advertises PIPELINING they are written
 * at once (RFC 2920), otherwise each is written when the previous reply has arrived. Replies resolve in order.
 * A command rejects only with an `SmtpTransportError`: `ETIMEDOUT` when its reply does not come in time, `ECLOSED`
 * when the connection drops or is closed, `EPROTOCOL` when its reply cannot be parsed; after any of them, the session
 * is closed and every pending command fails. A reply that arrives with no command waiting for it means the dialog is
 * out of step (RFC 5321 §4.3: every command gets exactly one reply): the session closes with an `EPROTOCOL`
 * `failure`. Arguments containing CR, LF or NUL are refused (`EINVALID`) before anything is written.
 */
export interface SmtpSession {
  readonly greeting: SmtpReply;
  /**
   * The reply to the last EHLO (or HELO), when the transport keeps it: many exchangers name the client's address in
   * brackets there (`250-mx.example.com Hello, [203.0.113.5]`), which tells a host behind NAT or a proxy its public one.
   */
  readonly hello?: SmtpReply;
  /** The EHLO keywords in upper case (`PIPELINING`, `SMTPUTF8`, `SIZE`, ...); empty after a HELO fallback. */
  readonly extensions: ReadonlySet<string>;
  /** True after a successful STARTTLS. */
  readonly secure: boolean;
  readonly closed: boolean;
  /**
   * Why the session closed, when the server or the network closed it (`ECLOSED`), a reply timed out (`ETIMEDOUT`), or
   * a reply was unreadable or unsolicited (`EPROTOCOL`); undefined while open and after `quit()` or `close()`. The
   * probe strategy voids replies it has read when this says `EPROTOCOL`; a transport without it is trusted.
   */
  readonly failure?: SmtpTransportError;
  /** `MAIL FROM:<from>` followed by the given ESMTP parameters (e.g. `SMTPUTF8`). */
  mail(from: string, parameters?: readonly string[], options?: SmtpCommandOptions): Promise<SmtpReply>;
  /** `RCPT TO:<to>`. */
  rcpt(to: string, options?: SmtpCommandOptions): Promise<SmtpReply>;
  rset(options?: SmtpCommandOptions): Promise<SmtpReply>;
  /** Sends QUIT, waits briefly for the reply, closes. Never rejects. */
  quit(): Promise<void>;
  /** Closes at once, without QUIT; pending commands fail with `ECLOSED`. Never throws. */
  close(): void;
}

export interface SmtpTransport {
  /** Rejects only with an `SmtpTransportError`. */
  open(options: SmtpOpenOptions): Promise<SmtpSession>;
}

export type SmtpTransportErrorCode =
  /** The connection was refused or reset before the greeting. */
  | 'ECONNECTION'
  /** No connection, greeting or reply within the allowed time. */
  | 'ETIMEDOUT'
  /** The server answered with a negative reply while opening (a 554/421 greeting, EHLO and HELO refused, ...). */
  | 'EREPLY'
  /** The server's reply could not be parsed, or came out of sequence. */
  | 'EPROTOCOL'
  /** The connection dropped or was closed while a command waited. */
  | 'ECLOSED'
  /** A command argument held CR, LF or NUL. */
  | 'EINVALID';

export type SmtpPhase = 'connect' | 'greeting' | 'ehlo' | 'starttls' | 'command';

export class SmtpTransportError extends Error {
  override readonly name = 'SmtpTransportError';
  constructor(
    readonly code: SmtpTransportErrorCode,
    readonly phase: SmtpPhase,
    message: string,
    /** The negative reply, for `EREPLY` (and a malformed one, for `EPROTOCOL`, with code 0). */
    readonly reply?: SmtpReply,
    /**
     * The id of the egress whose own failure this is (its proxy refused or did not answer the handshake, its source
     * address could not be bound), not the exchanger's: the prober warns about it.
     */
    readonly egress?: string,
  ) {
    super(message);
  }
}

/** True when the text could put a line break or a NUL on the wire (RFC 5321 §2.3.8: lines end only in CRLF). */
export function hasLineBreakOrNul(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13 || c === 10 || c === 0) return true;
  }
  return false;
}
