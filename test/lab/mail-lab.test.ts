// The mail lab, driven by a small raw client on node:net (exact bytes in both directions) and by nodemailer's
// smtp-connection (a real third-party client, for STARTTLS). No dependency on the engine.
import { promises as dns } from 'node:dns';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import SMTPConnection, { type SMTPConnectionCustomAuthResponse } from 'nodemailer/lib/smtp-connection';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mxFields } from './dns-server.js';
import { REPLIES, startMailLab, type MailLab, type MailLabScenario, type ServerSpec } from './mail-lab.js';

// Node runs timers on a loop clock truncated to the millisecond, so a timer may fire up to ~1 ms before
// performance.now() says its delay has passed; lower bounds that equal a configured delay allow for that.
const TIMER_SLACK_MS = 5;

// ------------------------------------------------------------------------------------------------------------------
// A raw SMTP client: writes exactly what it is given, reads whole replies (multi-line ones joined with \n).

class RawClient {
  received = '';
  /** What each read returned, in order (a reply sent in one write arrives as one chunk on loopback). */
  chunks: string[] = [];
  private socket: Socket | TLSSocket;
  private buffer = '';
  private readonly lines: string[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  readonly closed: Promise<void>;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    this.listen(socket);
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.once('close', () => {
      this.ended = true;
      this.wake?.();
    });
  }

  static open(lab: MailLab, name: string): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: lab.addressOf(name), port: lab.port });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        socket.on('error', () => {});
        resolve(new RawClient(socket));
      });
    });
  }

  get isClosed(): boolean {
    return this.ended;
  }

  private listen(socket: Socket | TLSSocket): void {
    socket.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.received += text;
      this.chunks.push(text);
      this.buffer += text;
      for (let end = this.buffer.indexOf('\r\n'); end >= 0; end = this.buffer.indexOf('\r\n')) {
        this.lines.push(this.buffer.slice(0, end));
        this.buffer = this.buffer.slice(end + 2);
      }
      this.wake?.();
    });
  }

  /** A complete reply from the lines received so far, if there is one. */
  private take(): string | undefined {
    let count = 0;
    for (const line of this.lines) {
      count++;
      if (!/^\d{3}-/.test(line)) return this.lines.splice(0, count).join('\n'); // last line, or a malformed one
    }
    return undefined;
  }

  async reply(timeoutMs = 3000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reply = this.take();
      if (reply !== undefined) return reply;
      if (this.ended) throw new Error(`closed (received ${JSON.stringify(this.received)})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timeout');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  async replies(count: number): Promise<string[]> {
    const all: string[] = [];
    for (let i = 0; i < count; i++) all.push(await this.reply());
    return all;
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  command(line: string): Promise<string> {
    this.write(`${line}\r\n`);
    return this.reply();
  }

  /** STARTTLS has been answered 220: upgrade this side. */
  async startTls(): Promise<TLSSocket> {
    const secure = tlsConnect({ socket: this.socket as Socket, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', resolve);
      secure.once('error', reject);
    });
    secure.on('error', () => {});
    this.socket = secure;
    this.listen(secure);
    return secure;
  }

  /** True if nothing at all arrives within `ms`. */
  async silentFor(ms: number): Promise<boolean> {
    const before = this.received.length;
    await sleep(ms);
    return this.received.length === before;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Connects, reads the greeting and sends EHLO. */
async function session(lab: MailLab, name: string): Promise<{ client: RawClient; greeting: string; ehlo: string }> {
  const client = await RawClient.open(lab, name);
  const greeting = await client.reply();
  const ehlo = await client.command('EHLO client.test');
  return { client, greeting, ehlo };
}

/** Waits until the lab has seen every connection close (it sees a close just after the client does). */
async function settled(target: MailLab): Promise<void> {
  for (let i = 0; i < 100 && target.stats().open > 0; i++) await sleep(10);
  expect(target.stats().open).toBe(0);
}

async function quit(client: RawClient): Promise<void> {
  expect(await client.command('QUIT')).toBe('221 2.0.0 Bye');
  await client.closed;
}

/** nodemailer's smtp-connection, RCPT-only through customAuth (feasibility.md §2). */
async function nodemailerSession(
  lab: MailLab,
  name: string,
): Promise<{ conn: SMTPConnection; send: (line: string) => Promise<SMTPConnectionCustomAuthResponse> }> {
  return new Promise((resolve, reject) => {
    const conn = new SMTPConnection({
      host: lab.addressOf(name),
      port: lab.port,
      name: 'client.test',
      logger: false,
      socketTimeout: 3000,
      tls: { rejectUnauthorized: false },
      customAuth: {
        PROBE: (ctx) => {
          ctx.resolve();
          resolve({
            conn,
            send: (line) =>
              new Promise((ok, ko) => ctx.sendCommand(line, (error, data) => (error ? ko(error) : ok(data)))),
          });
        },
      },
    });
    conn.on('error', reject);
    conn.connect((error) => {
      if (error) reject(error);
      else conn.login({ method: 'PROBE' }, (loginError) => loginError && reject(loginError));
    });
  });
}

// ------------------------------------------------------------------------------------------------------------------

const PARITY: ServerSpec = {
  mailboxes: ['alice', 'bob'],
  maxRecipients: 2,
  greylist: 1,
  rcpt: { full: '452 4.2.2 Mailbox full' },
};

const SCENARIO: MailLabScenario = {
  servers: {
    strict: { mailboxes: ['alice', 'Bob', 'carol@strict.test'] },
    catchall: { acceptAll: true },
    grey: { mailboxes: ['alice'], greylist: 2 },
    quota: { mailboxes: ['alice'], rcpt: { full: '452 4.2.2 Mailbox full' } },
    multi: {
      rcpt: { gone: '550 5.1.1 The email account that you tried to reach does not exist.\n550 5.1.1 Please try again' },
    },
    picky: { mailboxes: ['alice', 'bob'], maxRecipients: 1 },
    nosender: { mail: '550 5.7.1 Sender rejected' },
    banned: { greeting: '554 5.7.1 Your IP is on a blocklist' },
    busy: { greeting: '421 4.3.2 Service not available' },
    closing: { mailboxes: ['alice'], rcpt: { bye: '421 4.4.2 Closing connection' } },
    dropper: { mailboxes: ['alice'], drop: 'rcpt' },
    dropbob: { mailboxes: ['alice', 'bob'], drop: 'rcpt:bob' },
    dropgreet: { drop: 'greeting' },
    silent: { silent: 'greeting' },
    mute: { mailboxes: ['alice'], silent: 'rcpt' },
    slow: { mailboxes: ['alice'], delayMs: { rcpt: 300 } },
    slowraw: { mailboxes: ['alice'], delayMs: { rcpt: 300, rset: 100 } },
    ascii: { mailboxes: ['alice', 'jörg'], smtputf8: false },
    utf8: { mailboxes: ['alice', 'jörg'] },
    serial: { mailboxes: ['alice'], pipelining: false },
    sync: { mailboxes: ['alice'], pipelining: false, strictSync: true },
    tls: { mailboxes: ['alice'], starttls: true },
    tlsraw: { mailboxes: ['alice'], starttls: true, engine: 'raw' },
    garbage: { mailboxes: ['alice'], garbage: 'rcpt' },
    helo: { mailboxes: ['alice'], ehlo: '502 5.5.1 Error: command not implemented' },
    lategreet: { delayMs: { greeting: 150 } },
    lategreetraw: { delayMs: { greeting: 150 }, engine: 'raw' },
    tlsslow: { mailboxes: ['alice', 'bob'], starttls: true, delayMs: { starttls: 50, 'rcpt:bob': 200 } },
    'parity-ss': PARITY,
    'parity-raw': { ...PARITY, engine: 'raw' },
    omitbob: { mailboxes: ['alice', 'bob', 'carol'], maxRecipients: 2, omit: 'rcpt:bob' },
    omitmany: { mailboxes: ['alice'], omit: ['ehlo', 'rset'] },
    extra: { mailboxes: ['alice'], extra: 'rcpt:alice' },
    twice: { mailboxes: ['alice'], doubleReplies: true },
    onlyone: { mailboxes: ['alice'], maxConnections: 1 },
    norset: { mailboxes: ['alice'], rset: '550 5.5.0 No' },
    okrset: { mailboxes: ['alice'], rset: '250 2.0.0 Fine' },
    lagged: { mailboxes: ['alice'], replyDelayMs: 150 },
    laggeddrop: { mailboxes: ['alice'], replyDelayMs: 100, drop: 'rcpt' },
    laggedtls: { mailboxes: ['alice'], starttls: true, replyDelayMs: 50 },
    greywin: { mailboxes: ['alice'], greylistMs: 150 },
    greylong: { mailboxes: ['alice'], greylistMs: 60_000 },
  },
  domains: {
    'strict.test': ['strict'],
    'failover.test': ['refused', 'strict'],
    'equal.test': [
      { server: 'strict', priority: 5 },
      { server: 'catchall', priority: 5 },
    ],
    'null.test': { mx: [{ priority: 0, exchange: '' }] },
    'empty.test': [],
    'gone.test': { rcode: 'NXDOMAIN' },
  },
};

let lab: MailLab;

beforeAll(async () => {
  lab = await startMailLab(SCENARIO);
});

afterAll(async () => {
  await lab.close();
});

describe('addresses, port and DNS', () => {
  it('gives each server its own loopback address, all on one port, in declaration order', () => {
    expect(lab.servers[0]).toBe('strict');
    expect(lab.addressOf('strict')).toBe('127.0.0.2');
    expect(lab.addressOf('catchall')).toBe('127.0.0.3');
    expect(lab.addressOf('refused')).toBe(`127.0.0.${2 + lab.servers.length}`);
    expect(lab.hostOf('strict')).toBe('strict.mx.lab.test');
    expect(lab.port).toBeGreaterThan(0);
    expect(lab.dnsAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(() => lab.addressOf('nope')).toThrow(/no server "nope"/);
  });

  it('serves MX records in preference order and an A record per server through node:dns', async () => {
    const resolver = new dns.Resolver({ timeout: 500, tries: 1 });
    resolver.setServers([lab.dnsAddress]);
    expect(mxFields(await resolver.resolveMx('strict.test'))).toEqual([{ exchange: 'strict.mx.lab.test', priority: 10 }]);
    const failover = await resolver.resolveMx('failover.test');
    expect(mxFields(failover).sort((a, b) => a.priority - b.priority)).toEqual([
      { exchange: 'refused.mx.lab.test', priority: 10 },
      { exchange: 'strict.mx.lab.test', priority: 20 },
    ]);
    expect((await resolver.resolveMx('equal.test')).map((mx) => mx.priority)).toEqual([5, 5]);
    expect(await resolver.resolve4('strict.mx.lab.test')).toEqual(['127.0.0.2']);
    expect(await resolver.resolve4(lab.hostOf('refused'))).toEqual([lab.addressOf('refused')]);
    expect(mxFields(await resolver.resolveMx('null.test'))).toEqual([{ exchange: '', priority: 0 }]);
    await expect(resolver.resolveMx('empty.test')).rejects.toMatchObject({ code: 'ENODATA' });
    await expect(resolver.resolveMx('gone.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(lab.dns.queryCount('strict.test', 'MX')).toBeGreaterThanOrEqual(1);
  });

  it('refuses connections on the `refused` address', async () => {
    await expect(RawClient.open(lab, 'refused')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('listens on the port the scenario names, and says so when it is taken', async () => {
    const probe = await startMailLab({ servers: { a: {} } });
    const port = probe.port;
    await probe.close();
    const local = await startMailLab({ port, engine: 'raw', servers: { a: {}, b: {} } });
    try {
      expect(local.port).toBe(port);
      const client = await RawClient.open(local, 'b');
      expect(await client.reply()).toBe('220 b.mx.lab.test ESMTP');
      await quit(client);
      await expect(startMailLab({ port, servers: { a: {} } })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await local.close();
    }
  });

  it('goes on to 127.0.1.1 after 127.0.0.254, for labs of more than 253 servers', async () => {
    const servers = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`s${i}`, { engine: 'raw' as const }]));
    const local = await startMailLab({ servers, domains: { 'last.test': ['s299'] } });
    try {
      expect(local.addressOf('s0')).toBe('127.0.0.2');
      expect(local.addressOf('s252')).toBe('127.0.0.254');
      expect(local.addressOf('s253')).toBe('127.0.1.1');
      expect(local.addressOf('s299')).toBe('127.0.1.47');
      expect(local.addressOf('refused')).toBe('127.0.1.48');
      const resolver = new dns.Resolver({ timeout: 500, tries: 1 });
      resolver.setServers([local.dnsAddress]);
      expect(await resolver.resolve4(local.hostOf('s299'))).toEqual(['127.0.1.47']);
      const client = await RawClient.open(local, 's299');
      expect(await client.reply()).toBe('220 s299.mx.lab.test ESMTP');
      await quit(client);
    } finally {
      await local.close();
    }
  });

  // A lower bound only: a loaded machine may answer later, never sooner.
  it('dnsDelayMs delays every answer of the zones the lab builds, also after setDomains', async () => {
    const local = await startMailLab({ dnsDelayMs: 120, servers: { a: {} }, domains: { 'a.test': ['a'] } });
    try {
      const resolver = new dns.Resolver({ timeout: 2000, tries: 1 });
      resolver.setServers([local.dnsAddress]);
      const timed = async (lookup: () => Promise<unknown>): Promise<number> => {
        const started = performance.now();
        await lookup();
        return performance.now() - started;
      };
      expect(await timed(() => resolver.resolveMx('a.test'))).toBeGreaterThanOrEqual(115);
      expect(await timed(() => resolver.resolve4(local.hostOf('a')))).toBeGreaterThanOrEqual(115);
      local.setDomains({ 'b.test': ['a'] });
      expect(await timed(() => resolver.resolveMx('b.test'))).toBeGreaterThanOrEqual(115);
    } finally {
      await local.close();
    }
  });
});

describe('engines', () => {
  it('runs the plain behaviours on smtp-server and the faults on the raw responder', () => {
    const onSmtpServer = ['strict', 'catchall', 'grey', 'quota', 'picky', 'nosender', 'closing', 'slow', 'tls'];
    for (const name of onSmtpServer) expect([name, lab.engineOf(name)]).toEqual([name, 'smtp-server']);
    const onRaw = ['multi', 'banned', 'busy', 'dropper', 'silent', 'mute', 'slowraw', 'sync', 'tlsraw', 'garbage'];
    onRaw.push('omitbob', 'omitmany', 'extra', 'twice', 'norset', 'okrset', 'lagged', 'laggeddrop', 'laggedtls');
    expect(lab.engineOf('greywin')).toBe('smtp-server');
    for (const name of onRaw) {
      expect([name, lab.engineOf(name)]).toEqual([name, 'raw']);
    }
  });

  it('refuses to force smtp-server onto what it cannot do, and rejects typos', async () => {
    await expect(startMailLab({ servers: { x: { engine: 'smtp-server', drop: 'rcpt' } } })).rejects.toThrow(
      /smtp-server cannot do drop/,
    );
    await expect(startMailLab({ servers: { x: { mailbox: ['a'] } as ServerSpec } })).rejects.toThrow(
      /unknown option "mailbox"/,
    );
    await expect(startMailLab({ servers: { x: { drop: 'rpct' as 'rcpt' } } })).rejects.toThrow(/unknown trigger/);
    await expect(startMailLab({ servers: {}, domains: { 'a.test': ['ghost'] } })).rejects.toThrow(
      /unknown exchanger "ghost"/,
    );
    for (const [spec, obstacle] of [
      [{ omit: 'rcpt' }, 'omit'],
      [{ extra: 'mail' }, 'extra'],
      [{ doubleReplies: true }, 'doubleReplies'],
      [{ rset: '550 5.5.0 No' }, 'rset'],
      [{ replyDelayMs: 30 }, 'replyDelayMs'],
    ] as const) {
      await expect(startMailLab({ servers: { x: { engine: 'smtp-server', ...spec } } })).rejects.toThrow(
        `smtp-server cannot do ${obstacle}`,
      );
    }
    await expect(startMailLab({ servers: { x: { omit: 'rpct' as 'rcpt' } } })).rejects.toThrow(/unknown trigger/);
    await expect(startMailLab({ servers: { x: { replyDelayMs: -1 } } })).rejects.toThrow(/replyDelayMs must be/);
    await expect(startMailLab({ dnsDelayMs: Number.NaN })).rejects.toThrow(/dnsDelayMs must be/);
    await expect(startMailLab({ port: 70_000 })).rejects.toThrow(/port must be/);
  });

  it('a scenario-wide replyDelayMs puts every server that sets none on the raw responder', async () => {
    const local = await startMailLab({
      replyDelayMs: 40,
      servers: { lagging: { mailboxes: ['alice'] }, prompt: { mailboxes: ['alice'], replyDelayMs: 0 } },
    });
    try {
      expect(local.engineOf('lagging')).toBe('raw');
      expect(local.engineOf('prompt')).toBe('smtp-server');
      const started = performance.now();
      const client = await RawClient.open(local, 'lagging');
      expect(await client.reply()).toBe('220 lagging.mx.lab.test ESMTP');
      expect(performance.now() - started).toBeGreaterThanOrEqual(40 - TIMER_SLACK_MS);
      await quit(client);
    } finally {
      await local.close();
    }
    await expect(
      startMailLab({ replyDelayMs: 40, servers: { x: { engine: 'smtp-server' } } }),
    ).rejects.toThrow(/smtp-server cannot do replyDelayMs/);
  });

  // Only lower bounds: a loaded machine may be slower, never faster (no upper time bounds in tests).
  it('holds smtp-server greetings back 100 ms (its early-talker check) and delays greetings as asked', async () => {
    for (const [name, min] of [
      ['strict', 90],
      ['multi', 0],
      ['lategreet', 240], // delayMs.greeting comes on top of smtp-server's 100 ms
      ['lategreetraw', 140],
    ] as const) {
      const started = performance.now();
      const client = await RawClient.open(lab, name);
      expect(await client.reply()).toBe(`220 ${name}.mx.lab.test ESMTP`);
      const elapsed = performance.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(min);
      await quit(client);
    }
  });

  it('gives the same replies on both engines (the raw responder copies smtp-server)', async () => {
    const dialog = [
      'MAIL FROM:<a@b.test>',
      'EHLO client.test',
      'RCPT TO:<alice@x.test>',
      'MAIL FROM:a@b.test',
      'MAIL FROM:<a@b.test>',
      'MAIL FROM:<a@b.test>',
      'RCPT TO:alice',
      'RCPT TO:<alice@x.test>',
      'RCPT TO:<alice@x.test>',
      'RCPT TO:<full@x.test>',
      'RCPT TO:<full@x.test>',
      'RCPT TO:<nobody@x.test>',
      'RCPT TO:<nobody@x.test>',
      'RCPT TO:<bob@x.test>',
      'RCPT TO:<bob@x.test>',
      'RCPT TO:<carol@x.test>',
      'RCPT TO:<ALICE@x.test>',
      'RSET',
      'MAIL FROM:<a@b.test> SMTPUTF8',
      'RCPT TO:<jörg@x.test>',
      'RSET',
      'MAIL FROM:<a@b.test>',
      'RCPT TO:<jörg@x.test>',
      'HELO client.test',
      'NOOP',
      'VRFY alice',
      'STARTTLS',
      'FOO bar',
      'DATA',
      'QUIT',
    ];
    const transcripts: string[][] = [];
    for (const name of ['parity-ss', 'parity-raw']) {
      const client = await RawClient.open(lab, name);
      const replies = [await client.reply()];
      for (const line of dialog) replies.push(await client.command(line));
      await client.closed;
      transcripts.push(replies.map((reply) => reply.replaceAll(`${name}.mx.lab.test`, 'HOST')));
    }
    expect(transcripts[1]).toEqual(transcripts[0]);
    expect(transcripts[0]).toEqual([
      '220 HOST ESMTP',
      REPLIES.heloFirst,
      [
        '250-HOST Nice to meet you, [127.0.0.1]',
        '250-PIPELINING',
        '250-8BITMIME',
        '250-SMTPUTF8',
        '250-ENHANCEDSTATUSCODES',
        '250 SIZE 10485760',
      ].join('\n'),
      '503 5.5.1 Error: need MAIL command',
      '501 5.1.7 Error: Bad sender address syntax',
      '250 2.1.0 Accepted',
      '503 5.5.1 Error: nested MAIL command',
      '501 5.1.3 Error: Bad recipient address syntax',
      '450 4.7.1 <alice@x.test>: Recipient address rejected: Greylisted, try again later',
      '250 2.1.5 Accepted',
      '450 4.7.1 <full@x.test>: Recipient address rejected: Greylisted, try again later',
      '452 4.2.2 Mailbox full',
      '450 4.7.1 <nobody@x.test>: Recipient address rejected: Greylisted, try again later',
      '550 5.1.1 <nobody@x.test>: Recipient address rejected: User unknown',
      '450 4.7.1 <bob@x.test>: Recipient address rejected: Greylisted, try again later',
      '250 2.1.5 Accepted',
      '452 4.5.3 Error: too many recipients',
      '250 2.1.5 Accepted', // the same recipient again (case-insensitive) is not one too many
      '250 2.0.0 Flushed',
      '250 2.1.0 Accepted',
      '450 4.7.1 <jörg@x.test>: Recipient address rejected: Greylisted, try again later',
      '250 2.0.0 Flushed',
      '250 2.1.0 Accepted',
      '553 5.6.7 <jörg@x.test>: non-ASCII address without SMTPUTF8',
      '250 HOST Nice to meet you, [127.0.0.1]',
      '250 2.0.0 OK',
      '252 2.1.5 Try to send something. No promises though',
      '500 5.5.2 Error: command not recognized',
      '500 5.5.2 Error: command not recognized',
      '554 5.5.1 Error: the mail lab never accepts DATA',
      '221 2.0.0 Bye',
    ]);
  });
});

describe('behaviours', () => {
  it('strict: known mailboxes (case-insensitive, or full addresses) 250, others 550 5.1.1', async () => {
    const { client, greeting, ehlo } = await session(lab, 'strict');
    expect(greeting).toBe('220 strict.mx.lab.test ESMTP');
    expect(ehlo.split('\n')).not.toContain('250-STARTTLS');
    expect(await client.command('MAIL FROM:<probe@client.test>')).toBe('250 2.1.0 Accepted');
    expect(await client.command('RCPT TO:<alice@strict.test>')).toBe('250 2.1.5 Accepted');
    expect(await client.command('RCPT TO:<BOB@strict.test>')).toBe('250 2.1.5 Accepted');
    expect(await client.command('RCPT TO:<carol@strict.test>')).toBe('250 2.1.5 Accepted');
    expect(await client.command('RCPT TO:<carol@other.test>')).toBe(REPLIES.unknownUser('carol@other.test'));
    expect(await client.command('RCPT TO:<x7f3k2@strict.test>')).toBe(
      '550 5.1.1 <x7f3k2@strict.test>: Recipient address rejected: User unknown',
    );
    expect(await client.command('RSET')).toBe('250 2.0.0 Flushed');
    await quit(client);
  });

  it('catch-all: every recipient accepted', async () => {
    const { client } = await session(lab, 'catchall');
    await client.command('MAIL FROM:<probe@client.test>');
    expect(await client.command('RCPT TO:<anything-at-all-9d8f7@catchall.test>')).toBe('250 2.1.5 Accepted');
    await quit(client);
  });

  it('greylist: the first N attempts per recipient, across connections, get 450 4.7.1; reset() forgets', async () => {
    const attempt = async (local: string): Promise<string> => {
      const { client } = await session(lab, 'grey');
      await client.command('MAIL FROM:<probe@client.test>');
      const reply = await client.command(`RCPT TO:<${local}@grey.test>`);
      await quit(client);
      return reply;
    };
    lab.reset();
    expect(await attempt('alice')).toBe(REPLIES.greylisted('alice@grey.test'));
    expect(await attempt('Alice')).toBe(REPLIES.greylisted('Alice@grey.test'));
    expect(await attempt('nobody')).toBe(REPLIES.greylisted('nobody@grey.test'));
    expect(await attempt('alice')).toBe('250 2.1.5 Accepted');
    expect(await attempt('nobody')).toBe(REPLIES.greylisted('nobody@grey.test'));
    expect(await attempt('nobody')).toBe(REPLIES.unknownUser('nobody@grey.test'));
    lab.reset();
    expect(await attempt('alice')).toMatch(/^450 4\.7\.1 /);
  });

  it('exact RCPT replies, single- and multi-line', async () => {
    const quota = await session(lab, 'quota');
    await quota.client.command('MAIL FROM:<probe@client.test>');
    expect(await quota.client.command('RCPT TO:<full@quota.test>')).toBe('452 4.2.2 Mailbox full');
    expect(await quota.client.command('RCPT TO:<alice@quota.test>')).toBe('250 2.1.5 Accepted');
    await quit(quota.client);

    const multi = await session(lab, 'multi');
    await multi.client.command('MAIL FROM:<probe@client.test>');
    multi.client.received = '';
    expect(await multi.client.command('RCPT TO:<gone@multi.test>')).toBe(
      '550-5.1.1 The email account that you tried to reach does not exist.\n550 5.1.1 Please try again',
    );
    expect(multi.client.received).toBe(
      '550-5.1.1 The email account that you tried to reach does not exist.\r\n550 5.1.1 Please try again\r\n',
    );
    await quit(multi.client);
  });

  it('maxRecipients: a second recipient in one transaction gets 452 4.5.3, a new transaction starts over', async () => {
    const { client } = await session(lab, 'picky');
    await client.command('MAIL FROM:<probe@client.test>');
    expect(await client.command('RCPT TO:<alice@picky.test>')).toBe('250 2.1.5 Accepted');
    expect(await client.command('RCPT TO:<bob@picky.test>')).toBe('452 4.5.3 Error: too many recipients');
    expect(await client.command('RSET')).toBe('250 2.0.0 Flushed');
    await client.command('MAIL FROM:<probe@client.test>');
    expect(await client.command('RCPT TO:<bob@picky.test>')).toBe('250 2.1.5 Accepted');
    await quit(client);
  });

  it('MAIL FROM refused: no transaction, so RCPT gets 503', async () => {
    const { client } = await session(lab, 'nosender');
    expect(await client.command('MAIL FROM:<probe@client.test>')).toBe('550 5.7.1 Sender rejected');
    expect(await client.command('RCPT TO:<alice@nosender.test>')).toBe('503 5.5.1 Error: need MAIL command');
    await quit(client);
  });

  it('a 554 greeting: 503 to everything but QUIT (RFC 5321 3.1); a 421 greeting: closed at once', async () => {
    const banned = await RawClient.open(lab, 'banned');
    expect(await banned.reply()).toBe('554 5.7.1 Your IP is on a blocklist');
    expect(await banned.command('EHLO client.test')).toBe(REPLIES.afterRefusal);
    await quit(banned);

    const busy = await RawClient.open(lab, 'busy');
    expect(await busy.reply()).toBe('421 4.3.2 Service not available');
    await busy.closed;
  });

  it('a 421 at RCPT closes the connection (smtp-server)', async () => {
    const { client } = await session(lab, 'closing');
    await client.command('MAIL FROM:<probe@client.test>');
    expect(await client.command('RCPT TO:<bye@closing.test>')).toBe('421 4.4.2 Closing connection');
    await client.closed;
  });

  it('drop: the socket closes, without a reply, when the command arrives (or for one recipient only)', async () => {
    lab.reset();
    const dropper = await session(lab, 'dropper');
    await dropper.client.command('MAIL FROM:<probe@client.test>');
    dropper.client.received = '';
    dropper.client.write('RCPT TO:<alice@dropper.test>\r\n');
    await dropper.client.closed;
    expect(dropper.client.received).toBe('');
    expect(lab.transcript('dropper')).toEqual([
      ['EHLO client.test', 'MAIL FROM:<probe@client.test>', 'RCPT TO:<alice@dropper.test>'],
    ]);

    const dropbob = await session(lab, 'dropbob');
    await dropbob.client.command('MAIL FROM:<probe@client.test>');
    expect(await dropbob.client.command('RCPT TO:<alice@dropbob.test>')).toBe('250 2.1.5 Accepted');
    dropbob.client.write('RCPT TO:<BOB@dropbob.test>\r\n');
    await expect(dropbob.client.reply()).rejects.toThrow(/closed/);

    const early = await RawClient.open(lab, 'dropgreet');
    await early.closed;
    expect(early.received).toBe('');

    // Pipelined: the replies to the commands before the dropped one still arrive.
    const pipelined = await RawClient.open(lab, 'dropper');
    await pipelined.reply();
    pipelined.received = '';
    pipelined.write('EHLO client.test\r\nMAIL FROM:<probe@client.test>\r\nRCPT TO:<alice@dropper.test>\r\n');
    await pipelined.closed;
    expect(pipelined.received).toMatch(/^250-dropper\.mx\.lab\.test Nice to meet you/);
    expect(pipelined.received.endsWith('250 SIZE 10485760\r\n250 2.1.0 Accepted\r\n')).toBe(true);
  });

  it('silent: no greeting at all; or no reply to RCPT nor to anything after it', async () => {
    const silent = await RawClient.open(lab, 'silent');
    silent.write('EHLO client.test\r\n');
    expect(await silent.silentFor(300)).toBe(true);
    silent.destroy();

    const mute = await session(lab, 'mute');
    await mute.client.command('MAIL FROM:<probe@client.test>');
    mute.client.write('RCPT TO:<alice@mute.test>\r\nRSET\r\nQUIT\r\n');
    expect(await mute.client.silentFor(300)).toBe(true);
    expect(mute.client.isClosed).toBe(false);
    mute.client.destroy();
  });

  it('delayMs: the reply comes late, and the commands pipelined behind it wait their turn (both engines)', async () => {
    for (const name of ['slow', 'slowraw']) {
      const { client } = await session(lab, name);
      await client.command('MAIL FROM:<probe@client.test>');
      const started = performance.now();
      client.write(`RCPT TO:<alice@${name}.test>\r\nRCPT TO:<nobody@${name}.test>\r\nNOOP\r\n`);
      const replies = await client.replies(3);
      expect(replies).toEqual(['250 2.1.5 Accepted', REPLIES.unknownUser(`nobody@${name}.test`), '250 2.0.0 OK']);
      expect(performance.now() - started).toBeGreaterThanOrEqual(580); // two delayed RCPTs, one after the other
      await quit(client);
    }
  });

  it('SMTPUTF8: absent on `ascii` (MAIL ... SMTPUTF8 gets 555), advertised and honoured on `utf8`', async () => {
    const ascii = await session(lab, 'ascii');
    expect(ascii.ehlo.split('\n')).not.toContain('250-SMTPUTF8');
    expect(await ascii.client.command('MAIL FROM:<probe@client.test> SMTPUTF8')).toBe(REPLIES.utf8Unsupported);
    expect(await ascii.client.command('MAIL FROM:<probe@client.test>')).toBe('250 2.1.0 Accepted');
    expect(await ascii.client.command('RCPT TO:<jörg@ascii.test>')).toBe(REPLIES.utf8Required('jörg@ascii.test'));
    await quit(ascii.client);

    lab.reset();
    const utf8 = await session(lab, 'utf8');
    expect(utf8.ehlo.split('\n')).toContain('250-SMTPUTF8');
    expect(await utf8.client.command('MAIL FROM:<probe@client.test> SMTPUTF8')).toBe('250 2.1.0 Accepted');
    expect(await utf8.client.command('RCPT TO:<jörg@utf8.test>')).toBe('250 2.1.5 Accepted');
    expect(await utf8.client.command('RCPT TO:<JÖRG@utf8.test>')).toBe('250 2.1.5 Accepted');
    await quit(utf8.client);
    expect(lab.transcript('utf8')[0]).toContain('RCPT TO:<jörg@utf8.test>');
    expect(lab.connections('utf8')[0]?.raw).toContainEqual(Buffer.from('RCPT TO:<jörg@utf8.test>', 'utf8'));
  });

  it('no PIPELINING on `serial`; with strictSync a pipelined command gets 554 5.5.0 and the end', async () => {
    const serial = await session(lab, 'serial');
    expect(serial.ehlo.split('\n')).not.toContain('250-PIPELINING');
    await quit(serial.client);

    const sync = await session(lab, 'sync');
    expect(sync.ehlo.split('\n')).not.toContain('250-PIPELINING');
    expect(await sync.client.command('MAIL FROM:<probe@client.test>')).toBe('250 2.1.0 Accepted');
    sync.client.write('RCPT TO:<alice@sync.test>\r\nRCPT TO:<bob@sync.test>\r\n');
    expect(await sync.client.replies(2)).toEqual(['250 2.1.5 Accepted', REPLIES.syncError]);
    await sync.client.closed;
  });

  it('garbage: a malformed line instead of the reply, then the dialog goes on', async () => {
    const { client } = await session(lab, 'garbage');
    await client.command('MAIL FROM:<probe@client.test>');
    expect(await client.command('RCPT TO:<alice@garbage.test>')).toBe(REPLIES.garbage);
    expect(await client.command('RSET')).toBe('250 2.0.0 Flushed');
    await quit(client);
  });

  it('a custom EHLO reply leaves HELO working (the client fallback)', async () => {
    const client = await RawClient.open(lab, 'helo');
    await client.reply();
    expect(await client.command('EHLO client.test')).toBe('502 5.5.1 Error: command not implemented');
    expect(await client.command('MAIL FROM:<probe@client.test>')).toBe(REPLIES.heloFirst);
    expect(await client.command('HELO client.test')).toBe('250 helo.mx.lab.test Nice to meet you, [127.0.0.1]');
    expect(await client.command('MAIL FROM:<probe@client.test>')).toBe('250 2.1.0 Accepted');
    await quit(client);
  });
});

describe('STARTTLS with the self-signed certificate', () => {
  it('smtp-server, through nodemailer: upgrades on its own, then the probe dialog runs over TLS', async () => {
    lab.reset();
    const { conn, send } = await nodemailerSession(lab, 'tls');
    expect(conn.secure).toBe(true);
    expect((await send('MAIL FROM:<probe@client.test>')).status).toBe(250);
    expect(await send('RCPT TO:<alice@tls.test>')).toMatchObject({ status: 250, code: '2.1.5' });
    expect(await send('RCPT TO:<nobody@tls.test>')).toMatchObject({ status: 550, code: '5.1.1' });
    expect(await send('DATA')).toMatchObject({ status: 554 });
    await send('RSET');
    conn.quit();
    await new Promise((resolve) => conn.once('end', resolve));
    const [record] = lab.connections('tls');
    expect(record?.lines.slice(0, 2)).toEqual(['EHLO client.test', 'STARTTLS']);
    expect(record?.secureFrom).toBe(2);
    expect(record?.lines.slice(2)).toEqual([
      'EHLO client.test',
      'MAIL FROM:<probe@client.test>',
      'RCPT TO:<alice@tls.test>',
      'RCPT TO:<nobody@tls.test>',
      'DATA',
      'RSET',
      'QUIT',
    ]);
    expect(lab.stats('tls')).toMatchObject({ connections: 1, transactions: 1, rcpts: 2, data: 1 });
  });

  for (const name of ['tls', 'tlsraw']) {
    it(`${name}: STARTTLS advertised once, plaintext pipelined after it dropped, a fresh EHLO over TLS`, async () => {
      const { client, ehlo } = await session(lab, name);
      expect(ehlo.split('\n')).toContain('250-STARTTLS');
      client.write('STARTTLS\r\n');
      expect(await client.reply()).toBe('220 2.0.0 Ready to start TLS');
      const secure = await client.startTls();
      expect(secure.getPeerCertificate().subject?.CN).toBe('localhost');
      expect(await client.command('MAIL FROM:<probe@client.test>')).toBe(REPLIES.heloFirst);
      const again = await client.command('EHLO client.test');
      expect(again.split('\n')).not.toContain('250-STARTTLS');
      expect(await client.command('STARTTLS')).toBe(REPLIES.tlsActive);
      await client.command('MAIL FROM:<probe@client.test>');
      expect(await client.command(`RCPT TO:<alice@${name}.test>`)).toBe('250 2.1.5 Accepted');
      await quit(client);
    });
  }
});

describe('delays per recipient, and a delayed STARTTLS (raw responder)', () => {
  it('delays only the RCPT of the named recipient, and upgrades after a delayed 220', async () => {
    expect(lab.engineOf('tlsslow')).toBe('raw');
    const { client } = await session(lab, 'tlsslow');
    expect(await client.command('STARTTLS')).toBe('220 2.0.0 Ready to start TLS');
    await client.startTls();
    await client.command('EHLO client.test');
    await client.command('MAIL FROM:<probe@client.test>');
    expect(await client.command('RCPT TO:<alice@tlsslow.test>')).toBe('250 2.1.5 Accepted');
    const started = performance.now();
    expect(await client.command('RCPT TO:<Bob@tlsslow.test>')).toBe('250 2.1.5 Accepted');
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    await quit(client);
  });
});

describe('hostile replies (raw responder)', () => {
  it('omit: no reply at all to that command, which is still carried out; later ones are answered', async () => {
    const { client } = await session(lab, 'omitbob');
    await client.command('MAIL FROM:<probe@client.test>');
    client.received = '';
    client.write(
      'RCPT TO:<alice@omitbob.test>\r\nRCPT TO:<bob@omitbob.test>\r\nRCPT TO:<carol@omitbob.test>\r\nNOOP\r\n',
    );
    await client.replies(3);
    // bob's RCPT got no reply but was accepted: carol is the third recipient of a 2-recipient server.
    expect(client.received).toBe('250 2.1.5 Accepted\r\n452 4.5.3 Error: too many recipients\r\n250 2.0.0 OK\r\n');
    await quit(client);

    const many = await RawClient.open(lab, 'omitmany');
    expect(await many.reply()).toBe('220 omitmany.mx.lab.test ESMTP');
    many.received = '';
    many.write('EHLO client.test\r\nMAIL FROM:<probe@client.test>\r\nRSET\r\nNOOP\r\n');
    await many.replies(2);
    expect(many.received).toBe('250 2.1.0 Accepted\r\n250 2.0.0 OK\r\n');
    await quit(many);
  });

  it('extra: one unsolicited reply right after the reply to that command, in the same write', async () => {
    const { client } = await session(lab, 'extra');
    await client.command('MAIL FROM:<probe@client.test>');
    client.received = '';
    client.chunks = [];
    client.write('RCPT TO:<alice@extra.test>\r\n');
    await client.replies(2);
    expect(client.chunks).toEqual(['250 2.1.5 Accepted\r\n250 2.0.0 Unsolicited\r\n']);
    client.received = '';
    expect(await client.command('RCPT TO:<bob@extra.test>')).toBe(REPLIES.unknownUser('bob@extra.test'));
    expect(client.received).toBe(`${REPLIES.unknownUser('bob@extra.test')}\r\n`);
    await quit(client);
  });

  it('maxConnections: a connection beyond the limit gets 421 and is closed; the limit frees with the first one', async () => {
    const first = await RawClient.open(lab, 'onlyone');
    expect(await first.reply()).toBe('220 onlyone.mx.lab.test ESMTP');
    const second = await RawClient.open(lab, 'onlyone');
    expect(await second.reply()).toBe('421 4.7.0 Too many connections, try again later');
    await second.closed;
    first.write('QUIT\r\n');
    await first.closed;
    await settled(lab);
    const third = await RawClient.open(lab, 'onlyone');
    expect(await third.reply()).toBe('220 onlyone.mx.lab.test ESMTP');
    third.write('QUIT\r\n');
    await third.closed;
  });

  it('doubleReplies: every reply after the greeting comes twice, in one write', async () => {
    const client = await RawClient.open(lab, 'twice');
    expect(await client.reply()).toBe('220 twice.mx.lab.test ESMTP');
    expect(client.received).toBe('220 twice.mx.lab.test ESMTP\r\n');
    client.received = '';
    client.chunks = [];
    client.write('EHLO client.test\r\n');
    const [first, second] = await client.replies(2);
    expect(first).toMatch(/^250-twice\.mx\.lab\.test Nice to meet you/);
    expect(second).toBe(first);
    const ehloWire = `${(first ?? '').split('\n').join('\r\n')}\r\n`;
    expect(client.chunks).toEqual([ehloWire + ehloWire]);
    client.received = '';
    client.chunks = [];
    client.write('MAIL FROM:<probe@client.test>\r\n');
    await client.replies(2);
    expect(client.chunks).toEqual(['250 2.1.0 Accepted\r\n250 2.1.0 Accepted\r\n']);
    client.received = '';
    client.write('QUIT\r\n');
    await client.closed;
    expect(client.received).toBe('221 2.0.0 Bye\r\n221 2.0.0 Bye\r\n');
  });

  it('rset: the configured RSET reply; only a 2xx one resets the transaction', async () => {
    const no = await session(lab, 'norset');
    await no.client.command('MAIL FROM:<probe@client.test>');
    no.client.received = '';
    expect(await no.client.command('RSET')).toBe('550 5.5.0 No');
    expect(no.client.received).toBe('550 5.5.0 No\r\n');
    expect(await no.client.command('MAIL FROM:<probe@client.test>')).toBe(REPLIES.nestedMail);
    await quit(no.client);

    const ok = await session(lab, 'okrset');
    await ok.client.command('MAIL FROM:<probe@client.test>');
    expect(await ok.client.command('RSET')).toBe('250 2.0.0 Fine');
    expect(await ok.client.command('MAIL FROM:<probe@client.test>')).toBe(REPLIES.mailOk);
    await quit(ok.client);
  });

  it('greylistMs: every attempt within the window after the first one gets 450 4.7.1, then it passes', async () => {
    for (const name of ['greywin', 'greylong']) {
      const { client } = await session(lab, name);
      await client.command('MAIL FROM:<probe@client.test>');
      expect(await client.command(`RCPT TO:<alice@${name}.test>`)).toBe(REPLIES.greylisted(`alice@${name}.test`));
      await quit(client);
    }
    await sleep(200); // past greywin's 150 ms window, far within greylong's minute
    for (const [name, expected] of [
      ['greywin', REPLIES.rcptOk],
      ['greylong', REPLIES.greylisted('alice@greylong.test')],
    ] as const) {
      const { client } = await session(lab, name);
      await client.command('MAIL FROM:<probe@client.test>');
      expect(await client.command(`RCPT TO:<alice@${name}.test>`)).toBe(expected);
      await quit(client);
    }
  });
});

// Lower bounds only: a loaded machine may deliver later, never sooner.
describe('replyDelayMs: a delay line on the server output (raw responder)', () => {
  it('delays the greeting and every reply; a pipelined group comes back in one write, in order', async () => {
    const opened = performance.now();
    const client = await RawClient.open(lab, 'lagged');
    expect(await client.reply()).toBe('220 lagged.mx.lab.test ESMTP');
    expect(performance.now() - opened).toBeGreaterThanOrEqual(150 - TIMER_SLACK_MS);
    client.received = '';
    client.chunks = [];
    const sent = performance.now();
    client.write(
      'EHLO client.test\r\nMAIL FROM:<probe@client.test>\r\nRCPT TO:<alice@lagged.test>\r\n' +
        'RCPT TO:<bob@lagged.test>\r\nNOOP\r\n',
    );
    await client.replies(5);
    expect(performance.now() - sent).toBeGreaterThanOrEqual(150 - TIMER_SLACK_MS);
    expect(client.chunks).toHaveLength(1);
    const ehlo = client.received.slice(0, client.received.indexOf('250 SIZE 10485760\r\n') + 19);
    expect(ehlo).toMatch(/^250-lagged\.mx\.lab\.test Nice to meet you, \[127\.0\.0\.1\]\r\n(?:250-.*\r\n)*250 SIZE/);
    const unknown = REPLIES.unknownUser('bob@lagged.test');
    expect(client.received).toBe(`${ehlo}250 2.1.0 Accepted\r\n250 2.1.5 Accepted\r\n${unknown}\r\n250 2.0.0 OK\r\n`);
    await quit(client);
  });

  it('keeps byte order across overlapping writes, and closes only after the last reply is out', async () => {
    const { client } = await session(lab, 'lagged');
    client.received = '';
    client.write('NOOP\r\n');
    await sleep(20);
    client.write('RSET\r\n');
    await sleep(20);
    const sent = performance.now();
    client.write('QUIT\r\n');
    await client.closed;
    expect(performance.now() - sent).toBeGreaterThanOrEqual(150 - TIMER_SLACK_MS);
    expect(client.received).toBe('250 2.0.0 OK\r\n250 2.0.0 Flushed\r\n221 2.0.0 Bye\r\n');
  });

  it('a drop reaches the client after the replies still in the delay line', async () => {
    const client = await RawClient.open(lab, 'laggeddrop');
    client.write('EHLO client.test\r\nMAIL FROM:<probe@client.test>\r\nRCPT TO:<alice@laggeddrop.test>\r\n');
    await client.closed;
    expect(client.received).toMatch(/^220 laggeddrop\.mx\.lab\.test ESMTP\r\n250-laggeddrop/);
    expect(client.received.endsWith('250 SIZE 10485760\r\n250 2.1.0 Accepted\r\n')).toBe(true);
  });

  it('STARTTLS behind a delay line: the upgrade waits for the 220, then the dialog runs over TLS', async () => {
    const { client } = await session(lab, 'laggedtls');
    client.write('STARTTLS\r\n');
    expect(await client.reply()).toBe(REPLIES.starttls);
    await client.startTls();
    await client.command('EHLO client.test');
    await client.command('MAIL FROM:<probe@client.test>');
    expect(await client.command('RCPT TO:<alice@laggedtls.test>')).toBe(REPLIES.rcptOk);
    await quit(client);
  });
});

describe('wire handling, transcripts and counters', () => {
  for (const name of ['strict', 'multi']) {
    it(`${name}: pipelined commands in one chunk, and commands split across chunks`, async () => {
      const { client } = await session(lab, name);
      const batch = ['MAIL FROM:<probe@client.test>', `RCPT TO:<alice@${name}.test>`, `RCPT TO:<nobody@${name}.test>`];
      client.write([...batch, 'RSET', 'NOOP', ''].join('\r\n'));
      const expectedRcpt = name === 'strict' ? '250 2.1.5 Accepted' : REPLIES.unknownUser(`alice@${name}.test`);
      expect(await client.replies(5)).toEqual([
        '250 2.1.0 Accepted',
        expectedRcpt,
        REPLIES.unknownUser(`nobody@${name}.test`),
        '250 2.0.0 Flushed',
        '250 2.0.0 OK',
      ]);
      const pieces = ['MAIL FROM:<pro', 'be@client.test>\r', '\nRCPT TO:<alice@', `${name}.test>\r\nRS`, 'ET\r\n'];
      for (const piece of pieces) {
        client.write(piece);
        await sleep(15);
      }
      expect(await client.replies(3)).toEqual(['250 2.1.0 Accepted', expectedRcpt, '250 2.0.0 Flushed']);
      await quit(client);
    });
  }

  for (const name of ['strict', 'multi']) {
    it(`${name}: records the exact bytes, splitting only on CRLF, so a smuggled command shows`, async () => {
      lab.reset();
      const { client } = await session(lab, name);
      await client.command('MAIL FROM:<probe@client.test>');
      // A bare LF inside the line: the server's framing (LF) sees two commands, RCPT and DATA.
      client.write(`RCPT TO:<a@${name}.test>\nDATA\r\n`);
      await client.replies(2);
      client.write(Buffer.from(`RCPT TO:<b\u0000@${name}.test>\r\n`));
      await client.reply();
      client.write('NOOP\r\nRSET');
      await client.reply();
      const [record] = lab.connections(name);
      expect(record?.lines).toEqual([
        'EHLO client.test',
        'MAIL FROM:<probe@client.test>',
        `RCPT TO:<a@${name}.test>\nDATA`,
        `RCPT TO:<b\u0000@${name}.test>`,
        'NOOP',
      ]);
      expect(record?.raw[3]).toEqual(Buffer.from(`RCPT TO:<b\u0000@${name}.test>`));
      expect(record?.partial).toEqual(Buffer.from('RSET'));
      expect(lab.transcript(name)[0]?.at(-1)).toBe('RSET');
      const smuggled = lab.transcript(name).flat().filter((line) => /[\r\n\0]/.test(line));
      expect(smuggled).toHaveLength(2);
      expect(lab.stats(name)).toMatchObject({ transactions: 1, rcpts: 2, data: 1, commands: 6 });
      client.destroy();
      await client.closed;
    });
  }

  it('answers DATA with 554 on both engines, and counts it', async () => {
    lab.reset();
    for (const name of ['strict', 'multi']) {
      const { client } = await session(lab, name);
      await client.command('MAIL FROM:<probe@client.test>');
      await client.command(`RCPT TO:<alice@${name}.test>`);
      expect(await client.command('DATA')).toBe(REPLIES.data);
      expect(await client.command('RSET')).toBe('250 2.0.0 Flushed');
      await quit(client);
    }
    expect(lab.stats('strict').data).toBe(1);
    expect(lab.stats('multi').data).toBe(1);
    expect(lab.stats().data).toBe(2);
  });

  it('counts connections, open ones, the peak, transactions and recipients; reset() starts over', async () => {
    await settled(lab);
    lab.reset();
    const clients = await Promise.all([session(lab, 'strict'), session(lab, 'strict'), session(lab, 'catchall')]);
    expect(lab.stats('strict')).toMatchObject({ connections: 2, open: 2, maxConcurrent: 2 });
    expect(lab.stats()).toMatchObject({ connections: 3, open: 3, maxConcurrent: 3 });
    const [first] = clients;
    await first?.client.command('MAIL FROM:<probe@client.test>');
    await first?.client.command('RCPT TO:<alice@strict.test>');
    await first?.client.command('RCPT TO:<bob@strict.test>');
    await first?.client.command('RSET');
    await first?.client.command('MAIL FROM:<probe@client.test>');
    expect(lab.stats('strict')).toMatchObject({ transactions: 2, rcpts: 2, data: 0 });
    for (const { client } of clients) await quit(client);
    await settled(lab); // the server sees the close just after the client
    expect(lab.stats('strict')).toMatchObject({ connections: 2, open: 0, maxConcurrent: 2 });
    expect(lab.transcript('strict')).toHaveLength(2);
    lab.reset();
    expect(lab.stats('strict')).toEqual({
      connections: 0,
      open: 0,
      maxConcurrent: 0,
      commands: 0,
      transactions: 0,
      rcpts: 0,
      data: 0,
    });
    expect(lab.transcript('strict')).toEqual([]);
    expect(lab.dns.queries).toEqual([]);
  });

  it('keeps recording a connection that is open across reset()', async () => {
    const { client } = await session(lab, 'strict');
    lab.reset();
    await client.command('NOOP');
    expect(lab.stats('strict')).toMatchObject({ connections: 0, open: 1, maxConcurrent: 1, commands: 1 });
    expect(lab.transcript('strict')).toEqual([['NOOP']]);
    await quit(client);
  });
});

describe('changing the scenario', () => {
  it('a scenario-wide engine applies to every server that names none', async () => {
    const servers = { a: { mailboxes: ['x'] }, b: { engine: 'smtp-server' as const } };
    const local = await startMailLab({ engine: 'raw', servers });
    try {
      expect([local.engineOf('a'), local.engineOf('b')]).toEqual(['raw', 'smtp-server']);
      local.setServer('b', {});
      expect(local.engineOf('b')).toBe('raw');
    } finally {
      await local.close();
    }
  });

  it('setServer applies to the next connections, setDomains replaces the MX data', async () => {
    const local = await startMailLab({ servers: { one: { mailboxes: ['alice'] } }, domains: { 'a.test': ['one'] } });
    try {
      const before = await session(local, 'one');
      local.setServer('one', { acceptAll: true, garbage: 'rset' });
      expect(local.engineOf('one')).toBe('raw');
      const after = await session(local, 'one');
      for (const { client } of [before, after]) await client.command('MAIL FROM:<probe@client.test>');
      expect(await before.client.command('RCPT TO:<zed@a.test>')).toBe(REPLIES.unknownUser('zed@a.test'));
      expect(await after.client.command('RCPT TO:<zed@a.test>')).toBe('250 2.1.5 Accepted');
      expect(await after.client.command('RSET')).toBe(REPLIES.garbage);
      await quit(before.client);
      await quit(after.client);

      local.setDomains({ 'b.test': ['refused', 'one'] });
      const resolver = new dns.Resolver({ timeout: 500, tries: 1 });
      resolver.setServers([local.dnsAddress]);
      expect((await resolver.resolveMx('b.test')).length).toBe(2);
      await expect(resolver.resolveMx('a.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
      expect(() => local.setServer('two', {})).toThrow(/no server "two"/);
    } finally {
      await local.close();
    }
  });
});

describe('close', () => {
  function resources(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
    return counts;
  }

  it('closes every server, socket and pending reply: no handle of the lab is left', async () => {
    const before = resources();
    const local = await startMailLab({
      servers: {
        plain: { mailboxes: ['alice'] },
        secure: { mailboxes: ['alice'], starttls: true },
        hang: { silent: 'greeting' },
        late: { mailboxes: ['alice'], delayMs: { rcpt: 60_000 } },
        lateraw: { mailboxes: ['alice'], delayMs: { rcpt: 60_000 }, engine: 'raw' },
        laggard: { replyDelayMs: 60_000 },
      },
      domains: { 'x.test': ['plain'] },
    });
    const clients: RawClient[] = [];
    // An smtp-server connection still waiting for its greeting (the 100 ms timer).
    clients.push(await RawClient.open(local, 'plain'));
    // One upgraded to TLS.
    const secure = await session(local, 'secure');
    secure.client.write('STARTTLS\r\n');
    await secure.client.reply();
    await secure.client.startTls();
    await secure.client.command('EHLO client.test');
    clients.push(secure.client);
    // One never greeted, and two waiting for a delayed RCPT reply.
    clients.push(await RawClient.open(local, 'hang'));
    for (const name of ['late', 'lateraw']) {
      const { client } = await session(local, name);
      await client.command('MAIL FROM:<probe@client.test>');
      client.write(`RCPT TO:<alice@${name}.test>\r\n`);
      clients.push(client);
    }
    // And one whose greeting sits in a delay line.
    clients.push(await RawClient.open(local, 'laggard'));
    await sleep(20);
    expect(local.stats().open).toBe(6);

    await local.close();
    await Promise.all(clients.map((client) => client.closed));
    await local.close(); // idempotent
    await new Promise((resolve) => setImmediate(resolve));
    const after = resources();
    for (const [type, count] of after) expect([type, count]).toEqual([type, Math.min(count, before.get(type) ?? 0)]);
    expect(local.stats().open).toBe(0);
  });
});
