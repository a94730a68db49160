/**
 * The default SMTP transport (`SmtpTransport`), built on nodemailer's smtp-connection through its public API only.
 *
 * How nodemailer is driven:
 * - We open the TCP connection ourselves and hand it over with the `connection` option, so the 'connect' phase (and
 *   `localAddress`) is ours; nodemailer then reads the greeting, sends EHLO (HELO when EHLO is refused) and does
 *   STARTTLS when offered (`opportunisticTLS`).
 * - RCPT-only probing: `send()` always ends in DATA (it would deliver a message), so it is never used. Instead a
 *   custom SASL handler (`customAuth: { PROBE }` + `login({ method: 'PROBE' })`) hands us `ctx.sendCommand(line, cb)`,
 *   which writes any command line and calls back with the raw reply, in order (nodemailer keeps a FIFO of actions).
 *   No AUTH command is ever sent: the handler resolves at once and only keeps the function.
 * - nodemailer does not parse multi-line replies: every reply goes through our `parseReply`.
 * - A pending `sendCommand` callback is never called when the connection drops or times out (nodemailer clears its
 *   action queue): every pending command is failed from the 'error' / 'end' events, and an 'error' listener is
 *   always attached (an EventEmitter without one throws).
 * - The greeting text, the raw EHLO reply (nodemailer only exposes the few extensions it knows) and the phase
 *   reached while opening come from nodemailer's transaction log (`logger` + `transactionLog`, public options), read
 *   in one place: `HandshakeLog`. No internal field is read.
 *
 * Opening fails with (always an `SmtpTransportError`, the phase being how far the dialog got):
 * - ECONNECTION 'connect': refused, unreachable, or closed/reset before the greeting;
 * - ETIMEDOUT: `connectTimeoutMs` elapsed (one timer for connect, greeting, EHLO and STARTTLS together);
 * - EREPLY: a negative greeting (554, 421), EHLO and HELO both refused, a 421 at any step, with the parsed reply;
 * - EPROTOCOL: a greeting or EHLO/HELO reply that does not parse (nodemailer only looks at its first characters);
 * - ECONNECTION 'starttls': the TLS handshake failed, e.g. a certificate refused under `rejectUnauthorized`. No reply
 *   is involved (the server said 220 to STARTTLS), so not EREPLY; and no plaintext retry, which would silently
 *   undo the certificate check the caller asked for.
 * A session nobody closes is still closed by nodemailer's socket inactivity timeout (its default, 10 minutes), which
 * fails any pending command with ECLOSED; our per-command timers are the ones meant to decide.
 */
import net from 'node:net';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type {
  SMTPConnectionCustomAuthCommandCallback,
  SMTPConnectionCustomAuthContext,
  SMTPConnectionOptions,
} from 'nodemailer/lib/smtp-connection';
import { socksHandshake, type SocksHandshakeError } from './egress/socks.js';
import { parseReply, type SmtpReply } from './reply.js';
import {
  hasLineBreakOrNul,
  SmtpTransportError,
  type SmtpCommandOptions,
  type SmtpOpenOptions,
  type SmtpPhase,
  type SmtpSession,
  type SmtpTransport,
  type SmtpTransportErrorCode,
} from './transport.js';

export interface NodemailerTransportOptions {
  /** The local address to connect from (a host with several addresses, a dedicated probing address). */
  localAddress?: string;
  /**
   * Trust anchors for the STARTTLS certificate check (only used when `tls.rejectUnauthorized`), instead of Node's
   * bundled CAs: for a private PKI, and for tests.
   */
  ca?: string | Buffer | Array<string | Buffer>;
}

/** Upper bound of the wait for the QUIT reply (RFC 5321 §4.1.1.10: the server replies 221, then closes). */
const QUIT_WAIT_MS = 1000;

/**
 * nodemailer's own setup timers (greeting, STARTTLS) are set this much past our open deadline, so that ours always
 * decides and reports the phase; theirs are only a backstop.
 */
const NODEMAILER_TIMER_SLACK_MS = 5000;

const noop = (): void => {};

/** setTimeout fires at once for a delay above 2^31-1 ms (with a warning): clamp; NaN or negative means now. */
const MAX_TIMER_MS = 2 ** 31 - 1;
function timerDelay(ms: number): number {
  if (Number.isNaN(ms) || ms <= 0) return 0;
  return Math.min(ms, MAX_TIMER_MS);
}

function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
}

export function createNodemailerTransport(transportOptions: NodemailerTransportOptions = {}): SmtpTransport {
  return { open: (options) => openSession(options, transportOptions) };
}

/** The fields nodemailer puts on its errors (NodemailerError); read defensively, any Error may come. */
interface NodemailerErrorFields {
  code?: unknown;
  response?: unknown;
  message?: unknown;
}

type SendCommand = (line: string, done: SMTPConnectionCustomAuthCommandCallback) => void;

/**
 * What nodemailer's transaction log tells about the opening dialog: the greeting, the last EHLO/HELO reply, the last
 * reply of all, and the phase reached (from the commands it writes). nodemailer logs each command as it writes it
 * (`{ tnx: 'client' }`) and each complete reply (`{ tnx: 'server' }`, multi-line replies joined by "\n") before
 * acting on it. This is the one place that depends on that log's shape; if it ever changes, the fallbacks are: the
 * phase stays 'greeting', the greeting is not checked, and the extensions are the ones nodemailer reports.
 */
class HandshakeLog {
  phase: SmtpPhase = 'connect';
  greeting: string | undefined;
  /** The reply to the last EHLO or HELO sent, and which of the two it was. */
  hello: { command: 'EHLO' | 'HELO'; reply: string | undefined } | undefined;
  lastReply: string | undefined;
  /** Set once the session is open: later traffic is not recorded. */
  done = false;
  private lastCommand: 'EHLO' | 'HELO' | 'STARTTLS' | undefined;

  /** A bunyan-style logger for nodemailer; every level must exist, or nodemailer sends that level to another one. */
  readonly logger = {
    trace: noop,
    info: noop,
    warn: noop,
    error: noop,
    fatal: noop,
    debug: (entry: unknown, message: unknown): void => this.record(entry, message),
  };

  private record(entry: unknown, message: unknown): void {
    if (this.done || typeof message !== 'string' || typeof entry !== 'object' || entry === null) return;
    const tnx = (entry as { tnx?: unknown }).tnx;
    if (tnx === 'client') {
      const space = message.indexOf(' ');
      const verb = (space < 0 ? message : message.slice(0, space)).toUpperCase();
      if (verb === 'EHLO' || verb === 'HELO') {
        this.phase = 'ehlo';
        this.lastCommand = verb;
        this.hello = { command: verb, reply: undefined };
      } else if (verb === 'STARTTLS') {
        this.phase = 'starttls';
        this.lastCommand = verb;
      }
    } else if (tnx === 'server') {
      this.lastReply = message;
      if (this.lastCommand === undefined) this.greeting ??= message;
      else if ((this.lastCommand === 'EHLO' || this.lastCommand === 'HELO') && this.hello) this.hello.reply = message;
    }
  }
}

function openSession(options: SmtpOpenOptions, transportOptions: NodemailerTransportOptions): Promise<SmtpSession> {
  return new Promise<SmtpSession>((resolve, reject) => {
    if (hasLineBreakOrNul(options.heloName)) {
      reject(new SmtpTransportError('EINVALID', 'connect', 'the EHLO name holds CR, LF or NUL'));
      return;
    }
    const log = new HandshakeLog();
    let conn: SMTPConnection | undefined;
    /** The options nodemailer holds and reads on each command (see `log.done` below). */
    let connectionOptions: SMTPConnectionOptions | undefined;
    let settled = false;
    let probe: { send: SendCommand; extensions: readonly string[] } | undefined;
    const onProbe = (ctx: SMTPConnectionCustomAuthContext): void => {
      probe = { send: (line, done) => ctx.sendCommand(line, done), extensions: ctx.extensions };
      ctx.resolve();
    };
    // Events of the nodemailer connection go to the opener until the session exists, then to the session.
    const handlers = {
      error: (error: unknown): void => failOpen(error),
      end: (): void => fail('ECONNECTION', connectionPhase(), 'the connection closed while opening the session'),
    };

    // Through a proxy the TCP connection goes to the proxy, and the SOCKS5 handshake asks it for the exchanger's
    // address; otherwise straight to the exchanger, from the egress's source address when it has one.
    const { egress } = options;
    const proxy = egress?.proxy;
    const localAddress = egress?.localAddress ?? (egress === undefined ? transportOptions.localAddress : undefined);
    let socket: net.Socket;
    try {
      socket = net.connect(
        proxy !== undefined
          ? { host: proxy.host, port: proxy.port }
          : { host: options.host, port: options.port, ...(localAddress ? { localAddress } : {}) },
      );
    } catch (error) {
      // A bad port or local address throws synchronously; open() must still reject with an SmtpTransportError.
      reject(new SmtpTransportError('ECONNECTION', 'connect', `cannot connect: ${messageOf(error)}`, undefined, egressOf(localAddress)));
      return;
    }
    // Before the hand-over this listener reports refused/unreachable; after it nodemailer has its own listeners, and
    // this one stays as an absorber: after STARTTLS or teardown nodemailer detaches from this (plain) socket, and an
    // 'error' emitted without a listener would crash the process.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (conn) return;
      if (proxy !== undefined && !proxyConnected) {
        fail('ECONNECTION', 'connect', `cannot connect to the proxy of egress ${egress!.id} (${proxy.shown}): ${error.message}`, undefined, egress!.id);
      } else if (localAddress !== undefined && error.syscall === 'bind') {
        fail('ECONNECTION', 'connect', `egress ${egress?.id ?? '(transport)'} cannot connect from ${localAddress}: ${error.message}`, undefined, egressOf(localAddress));
      } else {
        fail('ECONNECTION', 'connect', `cannot connect to ${options.host}:${options.port}: ${error.message}`);
      }
    });
    let proxyConnected = false;
    let proxyAnswered = false;
    function egressOf(address: string | undefined): string | undefined {
      return address === undefined ? undefined : egress?.id;
    }

    // One timer for connect, greeting, EHLO and STARTTLS together (SmtpOpenOptions.connectTimeoutMs).
    const timer = setTimeout(() => {
      const awaited = log.phase === 'connect' ? 'connection' : log.phase;
      if (proxy !== undefined && log.phase === 'connect') {
        // A proxy not reached, or silent, is the egress's failure; one that answered and then waits may be waiting for
        // the exchanger.
        const own = proxyAnswered ? undefined : egress!.id;
        const where = !proxyConnected ? 'no connection to the proxy' : proxyAnswered ? 'no connection through the proxy to the exchanger' : 'no SOCKS5 answer from the proxy';
        return fail('ETIMEDOUT', 'connect', `egress ${egress!.id} (${proxy.shown}): ${where} within ${options.connectTimeoutMs} ms`, undefined, own);
      }
      fail('ETIMEDOUT', log.phase, `no ${awaited} within ${options.connectTimeoutMs} ms`);
    }, timerDelay(options.connectTimeoutMs));
    const onAbort = (): void => fail('ECLOSED', log.phase, 'the opening was aborted: its work was withdrawn');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted === true) onAbort();

    socket.once('connect', () => {
      if (settled) return;
      if (proxy === undefined) return begin();
      proxyConnected = true;
      // A proxy that never says a word of the handshake is the egress's failure when the timer ends it.
      const heard = (): void => void (proxyAnswered = true);
      socket.once('data', heard);
      socksHandshake(socket, proxy, options.host, options.port, options.connectTimeoutMs).then(
        () => {
          socket.removeListener('data', heard);
          if (!settled) begin();
        },
        (reason: SocksHandshakeError) => {
          // The proxy could not reach the exchanger: the exchanger's failure, as a refused direct connection is.
          const own = reason.reason === 'target' ? undefined : egress!.id;
          fail('ECONNECTION', 'connect', `egress ${egress!.id} (${proxy.shown}): ${reason.message}`, undefined, own);
        },
      );
    });

    /** The exchanger is connected (straight, or through the proxy): nodemailer takes the dialog from the greeting on. */
    function begin(): void {
      log.phase = 'greeting';
      try {
        connectionOptions = nodemailerOptions(options, transportOptions, socket, log, onProbe);
        conn = new SMTPConnection(connectionOptions);
        conn.on('error', (error: unknown) => handlers.error(error));
        conn.on('end', () => handlers.end());
        conn.connect((error) => (error ? failOpen(error) : onHandshake()));
      } catch (error) {
        // Not expected from nodemailer; caught so that it cannot become an uncaught exception in a socket event.
        fail('ECONNECTION', connectionPhase(), messageOf(error));
      }
    }

    /** A TCP drop before the greeting is reported as a connection failure (SmtpTransportErrorCode ECONNECTION). */
    function connectionPhase(): SmtpPhase {
      return log.phase === 'greeting' ? 'connect' : log.phase;
    }

    function failOpen(error: unknown): void {
      const fields = (error ?? {}) as NodemailerErrorFields;
      const detail = messageOf(error);
      if (fields.code === 'ETIMEDOUT') return fail('ETIMEDOUT', log.phase, detail);
      if (typeof fields.response === 'string' && fields.response.trim() !== '') {
        // A negative greeting, EHLO and HELO refused, a 421 to EHLO: nodemailer reports the raw reply.
        const reply = parseReply(fields.response);
        if (reply.code === 0) return fail('EPROTOCOL', log.phase, `unparseable reply during ${log.phase}`, reply);
        return fail('EREPLY', log.phase, `${reply.code} reply during ${log.phase}`, reply);
      }
      if (fields.code === 'EPROTOCOL') return fail('EPROTOCOL', log.phase, detail);
      // Socket errors, drops, and a failed TLS handshake (a certificate refused when `rejectUnauthorized`): no reply
      // is involved, so ECONNECTION with the phase, 'starttls' for the handshake. No plaintext retry: a caller who
      // asked for certificate checks must not be silently downgraded.
      fail('ECONNECTION', connectionPhase(), detail);
    }

    function fail(code: SmtpTransportErrorCode, phase: SmtpPhase, message: string, reply?: SmtpReply, egressId?: string): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      teardown(conn, socket);
      reject(new SmtpTransportError(code, phase, message, reply, egressId));
    }

    /** Runs inside nodemailer's reply processing (its 'connect' event): must not throw. */
    function onHandshake(): void {
      try {
        checkHandshake();
      } catch (error) {
        fail('ECONNECTION', connectionPhase(), messageOf(error));
      }
    }

    function checkHandshake(): void {
      if (settled || !conn) return;
      // nodemailer only checks that the greeting starts with "220" and the EHLO reply with "2": check the whole
      // replies (RFC 5321 §4.2: same code on every line, '-' on all but the last).
      const greeting = log.greeting === undefined ? undefined : parseReply(log.greeting);
      if (greeting && greeting.code !== 220) {
        return fail('EPROTOCOL', 'greeting', 'malformed greeting', greeting);
      }
      const hello = log.hello?.reply === undefined ? undefined : parseReply(log.hello.reply);
      if (hello && hello.code === 0) return fail('EPROTOCOL', 'ehlo', `malformed ${log.hello?.command} reply`, hello);
      // RFC 5321 §3.8: 421 means the server closes the channel, whatever it answers. nodemailer reports the session
      // as connected after a 421 to STARTTLS (opportunistic TLS goes on in plaintext) and closes it right after.
      const last = log.lastReply === undefined ? undefined : parseReply(log.lastReply);
      if (last?.code === 421) return fail('EREPLY', log.phase, `421 reply during ${log.phase}`, last);

      // The PROBE "authentication" (see the header): nodemailer runs the handler synchronously inside login(), and
      // the handler resolves at once, so login's callback also runs before login() returns.
      conn.login({ method: 'PROBE' }, (error) => {
        if (error) return failOpen(error);
        if (settled || !conn || !probe) return;
        settled = true;
        log.done = true;
        // nodemailer reads `transactionLog` on every command and reply (it keeps our options object): off once the
        // handshake is read, so that the probe's commands are not formatted for a log nobody reads.
        if (connectionOptions !== undefined) connectionOptions.transactionLog = false;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        const session = new NodemailerSession(conn, socket, probe.send, {
          greeting: greeting ?? parseReply('220 \r\n'),
          hello,
          extensions: extensionsOf(log, probe.extensions),
          secure: conn.secure,
          commandTimeoutMs: options.commandTimeoutMs,
        });
        handlers.error = (e) => session.onConnectionError(e);
        handlers.end = () => session.onConnectionEnd();
        resolve(session);
      });
    }
  });
}

function nodemailerOptions(
  options: SmtpOpenOptions,
  transportOptions: NodemailerTransportOptions,
  socket: net.Socket,
  log: HandshakeLog,
  onProbe: (ctx: SMTPConnectionCustomAuthContext) => void,
): SMTPConnectionOptions {
  const setupTimeout = timerDelay(options.connectTimeoutMs + NODEMAILER_TIMER_SLACK_MS);
  const servername = sniName(options.servername);
  return {
    connection: socket,
    host: options.host,
    port: options.port,
    // RFC 6066 §3: SNI carries a host name, never an address literal.
    ...(servername ? { servername } : {}),
    name: options.heloName,
    // RFC 3207: STARTTLS when the server offers it; a refused STARTTLS (454) goes on in plaintext.
    ignoreTLS: !options.tls.starttls,
    opportunisticTLS: true,
    tls: {
      rejectUnauthorized: options.tls.rejectUnauthorized,
      ...(transportOptions.ca ? { ca: transportOptions.ca } : {}),
    },
    connectionTimeout: setupTimeout,
    greetingTimeout: setupTimeout,
    // Destroy at once on close: we only close after QUIT's reply (or when giving up), and a lingering end() would
    // keep a socket and a timer alive up to 5 s.
    socketCloseTimeout: 0,
    logger: log.logger,
    transactionLog: true,
    customAuth: { PROBE: onProbe },
  };
}

/** The SNI name: a host name without its trailing dot, or nothing for an address literal or an empty name. */
function sniName(servername: string): string | undefined {
  const name = servername.endsWith('.') ? servername.slice(0, -1) : servername;
  return name !== '' && net.isIP(name) === 0 ? name : undefined;
}

/**
 * The EHLO keywords in upper case: the first word of each line of the EHLO reply after the first (RFC 5321
 * §4.1.1.1), empty after HELO. Without the raw reply (see HandshakeLog), the few that nodemailer recognises.
 */
function extensionsOf(log: HandshakeLog, fallback: readonly string[]): ReadonlySet<string> {
  if (log.hello === undefined) return new Set(fallback.map((keyword) => keyword.toUpperCase()));
  if (log.hello.command === 'HELO' || log.hello.reply === undefined) return new Set();
  const keywords = new Set<string>();
  for (const line of parseReply(log.hello.reply).lines.slice(1)) {
    const keyword = line.trim().split(/\s+/)[0];
    if (keyword) keywords.add(keyword.toUpperCase());
  }
  return keywords;
}

/** Closes everything: nodemailer's connection (destroying its socket, TLS or not) and our plain socket. */
function teardown(conn: SMTPConnection | undefined, socket: net.Socket): void {
  if (conn) {
    conn.removeAllListeners();
    // nodemailer emits nothing once closed, but a stray 'error' without a listener would crash the process.
    conn.on('error', noop);
    conn.close();
  }
  socket.destroy();
}

interface PendingCommand {
  readonly line: string;
  readonly verb: string;
  readonly timeoutMs: number;
  readonly resolve: (reply: SmtpReply) => void;
  readonly reject: (error: SmtpTransportError) => void;
  written: boolean;
  /** The session's reply timer runs for this command (it is at the head of the queue). */
  timed: boolean;
}

interface SessionState {
  greeting: SmtpReply;
  hello: SmtpReply | undefined;
  extensions: ReadonlySet<string>;
  secure: boolean;
  commandTimeoutMs: number;
}

class NodemailerSession implements SmtpSession {
  readonly greeting: SmtpReply;
  readonly hello: SmtpReply | undefined;
  readonly extensions: ReadonlySet<string>;
  readonly secure: boolean;
  private isClosed = false;
  private quitting = false;
  private closedBy: SmtpTransportError | undefined;
  private corked = false;
  private readonly pipelining: boolean;
  private readonly commandTimeoutMs: number;
  /** Commands in order: those written and waiting for their reply, then (without PIPELINING) those not yet written. */
  private readonly queue: PendingCommand[] = [];
  /**
   * The one reply timer, for the command at the head of the queue: restarted (`refresh`) for the next command of a
   * pipelined group rather than made anew for each.
   */
  private replyTimer: NodeJS.Timeout | undefined;
  private replyTimerMs = 0;

  constructor(
    private readonly conn: SMTPConnection,
    private readonly socket: net.Socket,
    private readonly send: SendCommand,
    state: SessionState,
  ) {
    this.greeting = state.greeting;
    this.hello = state.hello;
    this.extensions = state.extensions;
    this.secure = state.secure;
    this.commandTimeoutMs = state.commandTimeoutMs;
    this.pipelining = state.extensions.has('PIPELINING');
  }

  get closed(): boolean {
    return this.isClosed;
  }

  get failure(): SmtpTransportError | undefined {
    return this.closedBy;
  }

  mail(from: string, parameters: readonly string[] = [], options?: SmtpCommandOptions): Promise<SmtpReply> {
    if (hasLineBreakOrNul(from) || parameters.some(hasLineBreakOrNul)) return invalid('MAIL FROM');
    const tail = parameters.length > 0 ? ' ' + parameters.join(' ') : '';
    return this.command('MAIL', `MAIL FROM:<${from}>${tail}`, options);
  }

  rcpt(to: string, options?: SmtpCommandOptions): Promise<SmtpReply> {
    if (hasLineBreakOrNul(to)) return invalid('RCPT TO');
    return this.command('RCPT', `RCPT TO:<${to}>`, options);
  }

  rset(options?: SmtpCommandOptions): Promise<SmtpReply> {
    return this.command('RSET', 'RSET', options);
  }

  /**
   * QUIT (RFC 5321 §4.1.1.10), then close. The wait for its reply is short, at most 1 s or the command timeout, and
   * like every command's it starts once the replies before it have arrived (see `advance`), so a quit() issued
   * behind pending commands does not cut them short. Commands issued after quit() fail with ECLOSED.
   */
  async quit(): Promise<void> {
    if (this.isClosed || this.quitting) return;
    const reply = this.command('QUIT', 'QUIT', { timeoutMs: Math.min(QUIT_WAIT_MS, this.commandTimeoutMs) });
    this.quitting = true;
    try {
      await reply;
    } catch {
      // A missing or failed QUIT reply changes nothing: the session is closed either way.
    }
    this.close();
  }

  close(): void {
    this.shutdown('the session was closed');
  }

  /**
   * nodemailer's 'error' after the open: a drop, its idle timeout, or (code EPROTOCOL, "Unexpected Response") a
   * reply that came when no command was waiting for it.
   */
  onConnectionError(error: unknown): void {
    const reason = `the connection failed: ${messageOf(error)}`;
    const outOfStep = (error as NodemailerErrorFields | null)?.code === 'EPROTOCOL';
    this.shutdown(reason, new SmtpTransportError(outOfStep ? 'EPROTOCOL' : 'ECLOSED', 'command', reason));
  }

  /** nodemailer's 'end': the connection is gone (the server closed it, after a 421 reply, or we did). */
  onConnectionEnd(): void {
    this.shutdown('the connection closed', new SmtpTransportError('ECLOSED', 'command', 'the connection closed'));
  }

  private command(verb: string, line: string, options: SmtpCommandOptions | undefined): Promise<SmtpReply> {
    if (this.isClosed || this.quitting) {
      return Promise.reject(new SmtpTransportError('ECLOSED', 'command', `${verb}: the session is closed`));
    }
    return new Promise<SmtpReply>((resolve, reject) => {
      const timeoutMs = options?.timeoutMs ?? this.commandTimeoutMs;
      this.queue.push({ line, verb, timeoutMs, resolve, reject, written: false, timed: false });
      this.advance();
    });
  }

  /**
   * Writes what may be written and arms the timer of the command at the head. With PIPELINING every command is
   * written at once (RFC 2920 §3.1: MAIL, RCPT, RSET and a final QUIT may be sent without waiting); without it only
   * the head is, each after the previous reply (RFC 5321 §4.3: lock-step).
   *
   * A command's timer runs while it is at the head of the queue, i.e. from when the previous reply arrived: a
   * pipelined reply cannot come before the ones ahead of it (RFC 2920 §3.1), so the command that times out is the
   * one whose reply is missing, and a slow reply does not make the commands behind it time out.
   */
  private advance(): void {
    if (this.isClosed) return;
    for (const command of this.queue) {
      if (command.written) continue;
      if (!this.pipelining && command !== this.queue[0]) break;
      command.written = true;
      if (this.pipelining) this.corkUntilNextTurn();
      this.send(command.line, (error, data) => this.onReply(command, error, data?.response));
    }
    const head = this.queue[0];
    if (head !== undefined && !head.timed) this.timeHead(head);
  }

  /** Starts the reply timer for the command now at the head. */
  private timeHead(head: PendingCommand): void {
    head.timed = true;
    const delay = timerDelay(head.timeoutMs);
    if (this.replyTimer !== undefined && this.replyTimerMs === delay) {
      this.replyTimer.refresh();
      return;
    }
    clearTimeout(this.replyTimer);
    this.replyTimerMs = delay;
    this.replyTimer = setTimeout(() => {
      this.replyTimer = undefined;
      const timed = this.queue[0];
      if (timed?.timed === true) this.onTimeout(timed);
    }, delay);
  }

  private stopReplyTimer(): void {
    clearTimeout(this.replyTimer);
    this.replyTimer = undefined;
  }

  /**
   * Commands issued in one turn of the event loop leave in one write (RFC 2920 §3.1: a client SHOULD send a group
   * of commands together): nodemailer defers each write to the next turn (setImmediate), so the socket is corked
   * until the turn after that one, when every write of the group is in.
   */
  private corkUntilNextTurn(): void {
    if (this.corked) return;
    this.corked = true;
    this.socket.cork();
    setImmediate(() =>
      setImmediate(() => {
        this.corked = false;
        this.socket.uncork();
      }),
    );
  }

  private onReply(command: PendingCommand, error: Error | null, raw: string | undefined): void {
    if (this.isClosed) return;
    if (this.queue[0] !== command) {
      // Cannot happen (nodemailer answers its actions in order); if it did, the dialog is out of step.
      return this.shutdown(`${command.verb}: reply out of sequence`);
    }
    this.queue.shift();
    // The next command's wait starts now (advance restarts the timer); none waits, or none is written yet (lock-step).
    if (this.queue.length === 0 || !this.pipelining) this.stopReplyTimer();
    const reply = parseReply(error || raw === undefined ? '' : raw);
    if (reply.code === 0) {
      // A reply we cannot read leaves us unable to tell which reply belongs to which command: stop here.
      const error = new SmtpTransportError('EPROTOCOL', 'command', `${command.verb}: unparseable reply`, reply);
      command.reject(error);
      return this.shutdown('the session was closed after an unparseable reply', error);
    }
    command.resolve(reply);
    if (this.pipelining) return this.advance();
    // Lock-step: the next command goes out only once nodemailer has read what is already received (it reads one
    // reply per turn of the event loop). A second reply in the same packet then finds no command waiting and is seen
    // for what it is (an EPROTOCOL failure), instead of being taken as the next command's answer.
    setImmediate(() => setImmediate(() => this.advance()));
  }

  private onTimeout(command: PendingCommand): void {
    if (this.isClosed) return;
    const index = this.queue.indexOf(command);
    if (index >= 0) this.queue.splice(index, 1);
    const error = new SmtpTransportError('ETIMEDOUT', 'command', `${command.verb}: no reply within ${command.timeoutMs} ms`);
    command.reject(error);
    this.shutdown(`the session was closed after ${command.verb} timed out`, error);
  }

  /**
   * Closes once: every pending or queued command fails with ECLOSED, every timer is cleared, the sockets go.
   * `failure`: what closed it, unless we did (quit, close).
   */
  private shutdown(reason: string, failure?: SmtpTransportError): void {
    if (this.isClosed) return;
    this.isClosed = true;
    if (!this.quitting) this.closedBy = failure;
    const pending = this.queue.splice(0);
    this.stopReplyTimer();
    for (const command of pending) {
      command.reject(new SmtpTransportError('ECLOSED', 'command', `${command.verb}: ${reason}`));
    }
    teardown(this.conn, this.socket);
  }
}

function invalid(command: string): Promise<never> {
  return Promise.reject(new SmtpTransportError('EINVALID', 'command', `${command}: argument holds CR, LF or NUL`));
}
