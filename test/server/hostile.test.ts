// Hostile and malformed requests against the real `mailverify serve` in a child process: each is answered with the
// right status and a problem document (never a 500, never Fastify's or Node's own text), nothing the client sent is
// silently changed before it is verified, no foreign host is echoed, and a token outlives neither the password it
// was issued under nor an `exp` it lacks.
import { closeSync, fstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { SignJWT } from 'jose';
import Database from 'libsql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeHugeSharedStringWorkbook, writeSlowWorkbook } from '../lab/hostile-workbook.js';
import { startServe, type ServeProcess } from '../lab/serve-process.js';

const PASSWORD = 'hostile-test-password';
const SECRET = 'hostile-test-token-secret-0123456789';
const basic = (password: string) => `Basic ${Buffer.from(`root:${password}`).toString('base64')}`;
const AUTH = { authorization: basic(PASSWORD) };
const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' };

let dir: string;
let server: ServeProcess;

/** Starts `mailverify serve` (offline checks: no network is needed) on the data folder. */
function start(dataDir: string, password = PASSWORD, flags: string[] = []): Promise<ServeProcess> {
  return startServe(['--data-dir', dataDir, '--log-level', 'silent', '--checks', 'syntax', ...flags], {
    MAILVERIFY_ROOT_PASSWORD: password,
    MAILVERIFY_TOKEN_SECRET: SECRET,
  });
}

/** A connection that sends `request` and stays open; `answer` resolves with all it got once the server closes it. */
function hold(port: number, request: string): { answer: Promise<string>; socket: Socket } {
  const socket = connect(port, '127.0.0.1', () => socket.write(request));
  let answer = '';
  socket.on('data', (chunk) => (answer += String(chunk)));
  socket.on('error', () => {});
  return { answer: new Promise((resolve) => socket.on('close', () => resolve(answer))), socket };
}

/** Raw bytes to the server and everything it answers until it closes the connection. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += String(chunk)));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** The status, content type and JSON body of a raw HTTP answer. */
function parseRaw(answer: string): { status: number; type: string; body: any; headers: string } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const type = /^content-type: *(.+)$/im.exec(head)?.[1]?.trim() ?? '';
  return { status, type, body: body === '' ? undefined : JSON.parse(body), headers: head };
}

async function expectProblem(response: Response, status: number, detail?: RegExp): Promise<any> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem: any = await response.json();
  expect(problem).toMatchObject({ status, type: expect.stringMatching(/^\/problems\//) });
  if (detail !== undefined) expect(problem.detail).toMatch(detail);
  return problem;
}

async function submit(body: string | Buffer): Promise<Response> {
  return fetch(`${server.origin}/v2.7/email-validations?waitTime=5000`, { method: 'POST', headers: JSON_AUTH, body });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailverify-hostile-'));
  server = await start(join(dir, 'data'));
});

afterAll(async () => {
  if (server !== undefined) {
    const code = await server.stop();
    // A crash of the server is the failure to read: what it printed says why.
    expect(code, server.stderr()).toBe(0);
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('client errors are 400s with problem documents, not 500s', () => {
  it('reads a repeated status filter as the union of its values', async () => {
    const done = await submit(JSON.stringify({ entries: [{ inputData: 'a@b.com' }] }));
    const id = ((await done.json()) as any).overview.id;
    const list = await fetch(`${server.origin}/v2.7/email-validations?status=Completed&status=InProgress&limit=1000`, { headers: AUTH });
    expect(list.status).toBe(200);
    expect(((await list.json()) as any).data.map((job: { id: string }) => job.id)).toContain(id);
    const entries = await fetch(`${server.origin}/v2.7/email-validations/${id}/entries?status:exclude=Success&status:exclude=Duplicate`, { headers: AUTH });
    expect(entries.status).toBe(200);
  });

  it('refuses any other parameter given twice, naming it', async () => {
    await expectProblem(await fetch(`${server.origin}/v2.7/email-validations?limit=5&limit=6`, { headers: AUTH }), 400, /^limit: given more than once/);
    await expectProblem(await fetch(`${server.origin}/v2.7/email-validations?sort=createdOn&sort=-createdOn`, { headers: AUTH }), 400, /^sort/);
  });

  it('refuses a time past year 9999 once in UTC', async () => {
    const url = `${server.origin}/v2.7/email-validations?createdOn:since=${encodeURIComponent('9999-12-31T23:59:59-01:00')}`;
    await expectProblem(await fetch(url, { headers: AUTH }), 400, /^createdOn:since: /);
  });

  it('answers a path segment too long to be an id with 404 (an unknown resource) and a problem document', async () => {
    await expectProblem(await fetch(`${server.origin}/v2.7/email-validations/${'a'.repeat(400)}`, { headers: AUTH }), 404);
  });

  it('answers a malformed URL with 400 and a problem document', async () => {
    await expectProblem(await fetch(`${server.origin}/v2.7/email-validations/%zz`, { headers: AUTH }), 400, /URL/);
  });

  it('answers headers too large with 431 and a problem document', async () => {
    const answer = parseRaw(await raw(server.port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    expect(answer.status).toBe(431);
    expect(answer.type).toBe('application/problem+json');
    expect(answer.body).toMatchObject({ status: 431, title: 'Request Header Fields Too Large' });
  });

  it('answers a malformed request line with 400 and a problem document', async () => {
    const answer = parseRaw(await raw(server.port, 'GET /health HTTP/1.1 extra\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.type).toBe('application/problem+json');
  });

  it('answers a plain OPTIONS (no Origin) without refusing it as text', async () => {
    const response = await fetch(`${server.origin}/v2.7/email-validations`, { method: 'OPTIONS', headers: AUTH });
    expect(response.status).toBeLessThan(300);
    expect(response.headers.get('content-type') ?? '').not.toMatch(/^text\/plain/);
  });
});

describe('what the client sent is verified as sent, or refused', () => {
  it('refuses a NUL in inputData, custom or name with 400 naming the field', async () => {
    await expectProblem(await submit(JSON.stringify({ entries: [{ inputData: 'jane@example.com\u0000<script>' }] })), 400, /^entries\[0\]\.inputData: holds a NUL/);
    await expectProblem(await submit(JSON.stringify({ entries: [{ inputData: 'a@b.com' }, { inputData: 'c@d.com', custom: 'x\u0000y' }] })), 400, /^entries\[1\]\.custom: holds a NUL/);
    await expectProblem(await submit(JSON.stringify({ name: 'n\u0000', entries: [{ inputData: 'a@b.com' }] })), 400, /^name: holds a NUL/);
  });

  it('refuses a lone surrogate with 400 naming the field', async () => {
    await expectProblem(await submit('{"entries":[{"inputData":"a\\ud800@b.com"}]}'), 400, /^entries\[0\]\.inputData: holds a lone surrogate/);
  });

  it('refuses a body that is not valid UTF-8 with 400', async () => {
    const body = Buffer.concat([Buffer.from('{"entries":[{"inputData":"a'), Buffer.from([0xff]), Buffer.from('@b.com"}]}')]);
    await expectProblem(await submit(body), 400, /not valid UTF-8/);
  });

  it('counts the 1,024-character limit of inputData in characters, not UTF-16 units', async () => {
    const accepted = await submit(JSON.stringify({ entries: [{ inputData: '😀'.repeat(600) }] }));
    expect(accepted.status).toBe(200);
    await expectProblem(await submit(JSON.stringify({ entries: [{ inputData: '😀'.repeat(1025) }] })), 400, /^entries\[0\]\.inputData: at most 1024 characters/);
  });
});

describe('every part of a file import is capped', () => {
  it('refuses a part it does not use past 1 MiB with 413 naming it, instead of reading it to its end', async () => {
    const form = new FormData();
    form.append('inputFile', new Blob(['a@b.com\n'], { type: 'text/plain' }), 'list.txt');
    form.append('junk', 'x'.repeat(3 * 1024 * 1024));
    const response = await fetch(`${server.origin}/v2.7/email-validations`, { method: 'POST', headers: AUTH, body: form });
    await expectProblem(response, 413, /"junk", which this server does not use, is larger than 1048576 bytes/);
    // A small unused part is still read and dropped.
    const small = new FormData();
    small.append('inputFile', new Blob(['a@b.com\n'], { type: 'text/plain' }), 'list.txt');
    small.append('note', 'from the import page');
    expect((await fetch(`${server.origin}/v2.7/email-validations`, { method: 'POST', headers: AUTH, body: small })).status).toBeLessThan(300);
  });
});

describe('workbook imports: memory bounded per reader and in total', () => {
  const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
  /**
   * A server of its own, so that its peak memory is this describe's; at most 2 readers, each for at most 8 s; the
   * system's temporary folder its own too, to see what is left there.
   */
  let reading: ServeProcess;
  let systemTemp: string;

  beforeAll(async () => {
    systemTemp = join(dir, 'system-temp');
    mkdirSync(systemTemp);
    reading = await startServe(
      ['--data-dir', join(dir, 'reading'), '--checks', 'syntax', '--log-level', 'warn', '--max-spreadsheet-readers', '2', '--spreadsheet-timeout', '2500'],
      { MAILVERIFY_ROOT_PASSWORD: PASSWORD, MAILVERIFY_TOKEN_SECRET: SECRET, TMPDIR: systemTemp },
    );
  });

  afterAll(async () => {
    if (reading !== undefined) expect(await reading.stop(), reading.stderr()).toBe(0);
  });

  function uploadWorkbook(file: Buffer): Promise<Response> {
    const form = new FormData();
    form.append('inputFile', new Blob([file], { type: XLSX_TYPE }), 'list.xlsx');
    return fetch(`${reading.origin}/v2.7/email-validations?waitTime=5000`, { method: 'POST', headers: AUTH, body: form });
  }

  /** The most memory the server process has held so far (Linux: VmHWM). */
  async function peakRss(): Promise<number> {
    const status = await readFile(`/proc/${reading.child.pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
  }

  it('refuses a 200 KiB workbook holding one 200 MiB shared string with 413 naming inputFile, its memory never held', async () => {
    const path = join(dir, 'huge-shared-string.xlsx');
    await writeHugeSharedStringWorkbook(path, 200 * 1024 * 1024);
    const file = readFileSync(path);
    expect(file.length).toBeLessThan(256 * 1024);
    const answers = await Promise.all([uploadWorkbook(file), uploadWorkbook(file)]);
    for (const answer of answers) await expectProblem(answer, 413, /^inputFile: the workbook's shared string table \(xl\/sharedStrings\.xml\) inflates to more than/);
    // Before the caps, one such upload took the server past 800 MiB (its reader's string, and a copy in the server's heap).
    if (process.platform === 'linux') expect(await peakRss()).toBeLessThan(300 * 1024 * 1024);
  }, 120_000);

  it('reads at most --max-spreadsheet-readers workbooks at once: one more is 503 with Retry-After, a retry later is read', async () => {
    const path = join(dir, 'slow.xlsx');
    // Three million rows: exceljs reads one million in 2.7 s on an idle machine with the fastest Node.js here (24), so
    // these take three times as long, far past the 2.5 s the readers are given, so that each holds its slot until its time
    // limit; a one-row workbook takes well under 1 s.
    await writeSlowWorkbook(path, 3_000_000);
    const slow = readFileSync(path);
    const answers = await Promise.all([uploadWorkbook(slow), uploadWorkbook(slow), uploadWorkbook(slow)]);
    const refused = answers.filter((answer) => answer.status === 503);
    expect(answers.map((answer) => answer.status).sort()).toEqual([415, 415, 503]);
    await expectProblem(refused[0]!, 503, /^inputFile: the server is reading 2 workbooks already, its limit; retry after 5 s\.$/);
    expect(refused[0]!.headers.get('retry-after')).toBe('5');
    for (const answer of answers.filter((answer) => answer.status === 415)) await expectProblem(answer, 415, /^inputFile: the xlsx workbook was not read within 2.5 s\.$/);
    // The operator is told why a reader stopped; the client only that it did.
    expect(reading.stderr()).toMatch(/"cause":"timeout".*"msg":"a workbook reader failed"/);

    const book = new ExcelJS.Workbook();
    book.addWorksheet('list').addRow(['retry@example.com']);
    const retry = await uploadWorkbook(Buffer.from(await book.xlsx.writeBuffer()));
    expect(retry.status).toBe(200);
    expect(((await retry.json()) as any).entries.data.map((entry: { inputData: string }) => entry.inputData)).toEqual(['retry@example.com']);
    // The readers stopped at their time limit left nothing behind (exceljs's copies of the sheets went with the uploads).
    expect(readdirSync(systemTemp)).toEqual([]);
  }, 120_000);
});

describe('Location is a path', () => {
  it('never echoes the host of an absolute-form request target (2.x and 1.4)', async () => {
    for (const version of ['v2.7', 'v1.4']) {
      const body = JSON.stringify({ entries: [{ inputData: 'a@b.com' }] });
      const answer = parseRaw(
        await raw(
          server.port,
          `POST http://evil.example/${version}/email-validations HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
            `Authorization: ${AUTH.authorization}\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        ),
      );
      const location = /^location: *(.+)$/im.exec(answer.headers)?.[1]?.trim();
      expect(location, version).toMatch(new RegExp(`^/${version.replace('.', '\\.')}/email-validations/[0-9a-f-]{36}$`));
    }
  });
});

describe('bearer tokens', () => {
  it('refuses a token signed without exp, even with the right key and subject', async () => {
    const owner = ((await (await submit(JSON.stringify({ entries: [{ inputData: 'a@b.com' }] }))).json()) as any).overview.owner;
    const forever = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(owner).sign(new TextEncoder().encode(SECRET));
    await expectProblem(await fetch(`${server.origin}/v2.7/email-validations`, { headers: { authorization: `Bearer ${forever}` } }), 401);
  });

  it('revokes the tokens of a password once the root password changes', async () => {
    const data = join(dir, 'rotate');
    const first = await start(data, 'first-password');
    let token: string;
    try {
      const issued = await fetch(`${first.origin}/v2.7/auth/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'root', password: 'first-password' }),
      });
      token = ((await issued.json()) as any).accessToken;
      expect((await fetch(`${first.origin}/v2.7/email-validations`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const second = await start(data, 'second-password');
    try {
      await expectProblem(await fetch(`${second.origin}/v2.7/email-validations`, { headers: { authorization: `Bearer ${token}` } }), 401);
      expect((await fetch(`${second.origin}/v2.7/email-validations`, { headers: { authorization: basic('second-password') } })).status).toBe(200);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });
});

describe('no connection is kept forever', () => {
  // With credentials, so that the body is waited for (a request without them is refused before its body is read).
  const HANGING_BODY =
    `POST /v2.7/email-validations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${AUTH.authorization}\r\n` +
    'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"entr';

  it('answers a body that never ends with 408 once the request timeout has passed, and closes the connection', async () => {
    const quick = await start(join(dir, 'timeouts'), PASSWORD, ['--request-timeout', '1500', '--headers-timeout', '1000']);
    try {
      const body = parseRaw(await hold(quick.port, HANGING_BODY).answer);
      expect(body.status).toBe(408);
      expect(body.type).toBe('application/problem+json');
      const headers = parseRaw(await hold(quick.port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n').answer);
      expect(headers.status).toBe(408);
    } finally {
      expect(await quick.stop()).toBe(0);
    }
  }, 30_000);

  it('closes a connection that sends nothing once the idle timeout has passed (well before the headers timeout)', async () => {
    const quick = await start(join(dir, 'idle'), PASSWORD, ['--idle-timeout', '1000', '--headers-timeout', '60000']);
    try {
      // The test's own time limit (30 s) is far below the headers timeout: only the idle timeout can close it.
      expect(await hold(quick.port, '').answer).toBe('');
    } finally {
      expect(await quick.stop()).toBe(0);
    }
  }, 30_000);

  it('stops cleanly on SIGTERM (exit 0) while a client is still sending a body', async () => {
    const held = await start(join(dir, 'held'));
    const clients = Array.from({ length: 5 }, () => hold(held.port, HANGING_BODY));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await held.stop()).toBe(0);
    await Promise.all(clients.map((client) => client.answer));
  }, 30_000);
});

describe('a data folder that looks reset is said in the log', () => {
  it('warns when the jobs are there but the root account id is not, and when the database file is empty', async () => {
    const data = join(dir, 'reset');
    const first = await start(data);
    const job = await fetch(`${first.origin}/v2.7/email-validations?waitTime=5000`, {
      method: 'POST',
      headers: JSON_AUTH,
      body: JSON.stringify({ entries: [{ inputData: 'a@b.com' }] }),
    });
    expect(job.status).toBe(200);
    expect(await first.stop()).toBe(0);

    const database = new Database(join(data, 'mailverify.db'));
    database.prepare("DELETE FROM settings WHERE key = 'root.id'").run();
    database.close();
    const second = await start(data, PASSWORD, ['--log-level', 'warn']);
    expect(await second.stop()).toBe(0);
    expect(second.stderr()).toMatch(/the data holds 1 job but no root account id/);

    truncateSync(join(data, 'mailverify.db'), 0);
    const third = await start(data, PASSWORD, ['--log-level', 'warn']);
    expect(await third.stop()).toBe(0);
    expect(third.stderr()).toMatch(/the database file is empty \(0 bytes\)/);
  }, 30_000);
});

describe('logging matches severity', () => {
  it('logs a client that hangs up mid-upload at info, without a stack, not as an error', async () => {
    const logged = await start(join(dir, 'hangup'), PASSWORD, ['--log-level', 'info']);
    try {
      const { socket } = hold(
        logged.port,
        `POST /v2.7/email-validations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${AUTH.authorization}\r\n` +
          'Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: 100000\r\n\r\n' +
          '--xyz\r\nContent-Disposition: form-data; name="inputFile"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\na@b.com\n',
      );
      await until(() => logged.stderr().includes('"incoming request"'));
      socket.destroy();
      await until(() => logged.stderr().includes('the client closed the connection before its request was read'));
    } finally {
      expect(await logged.stop()).toBe(0);
    }
    const lines = logged.stderr().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  }, 30_000);
});

/** Resolves once `condition` holds, looking every 50 ms (the test's own time limit bounds the wait). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('callbacks', () => {
  it('delivers to a receiver that answers at once without waiting behind 40 that never answer', async () => {
    // 40 receivers that accept the connection and never answer; counts the connections they saw end.
    let silentEnded = 0;
    const silentSockets = new Set<Socket>();
    const silent = createTcpServer((socket) => {
      silentSockets.add(socket);
      // Read (and drop) what comes, so that the end of a connection the server gives up on is seen.
      socket.resume();
      socket.on('error', () => {});
      socket.on('close', () => {
        silentSockets.delete(socket);
        silentEnded++;
      });
    });
    let arrived: (() => void) | undefined;
    const goodArrived = new Promise<void>((resolve) => (arrived = resolve));
    const good = createHttpServer((request, response) => {
      request.resume();
      response.end();
      arrived!();
    });
    await Promise.all([new Promise<void>((r) => silent.listen(0, '127.0.0.1', r)), new Promise<void>((r) => good.listen(0, '127.0.0.1', r))]);
    const callbacks = await start(join(dir, 'callbacks'), PASSWORD, ['--allow-private-addresses', '--callback-timeout', '3000']);
    try {
      const submitWith = (url: string) =>
        fetch(`${callbacks.origin}/v2.7/email-validations`, {
          method: 'POST',
          headers: JSON_AUTH,
          body: JSON.stringify({ entries: [{ inputData: 'a@b.com' }], callback: { url } }),
        });
      for (let i = 0; i < 40; i++) expect((await submitWith(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook/${i}`)).status).toBeLessThan(300);
      expect((await submitWith(`http://127.0.0.1:${(good.address() as AddressInfo).port}/hook`)).status).toBeLessThan(300);
      await goodArrived;
      // Every silent receiver's try is still waiting for its answer (3 s each): none had to end first.
      expect(silentEnded).toBe(0);
    } finally {
      expect(await callbacks.stop()).toBe(0);
      for (const socket of silentSockets) socket.destroy();
      await Promise.all([new Promise((r) => silent.close(r)), new Promise((r) => good.close(r))]);
    }
  }, 60_000);
});

describe('a read cut by a deletion', () => {
  /** Reads the first chunk of an answer, deletes the job, then reads on: resolves with how the body ended. */
  async function readAcrossDeletion(url: string, accept: string, id: string): Promise<{ status: number; ended: 'complete' | 'aborted'; bytes: number }> {
    const response = await fetch(url, { headers: { ...AUTH, accept } });
    const reader = response.body!.getReader();
    let bytes = (await reader.read()).value?.length ?? 0;
    const deleted = await fetch(`${server.origin}/v2.7/email-validations/${id}`, { method: 'DELETE', headers: AUTH });
    expect(deleted.status).toBe(200);
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return { status: response.status, ended: 'complete', bytes };
        bytes += value.length;
      }
    } catch {
      return { status: response.status, ended: 'aborted', bytes };
    }
  }

  it('ends a CSV or xlsx export as an aborted response, never as a complete file', async () => {
    for (const accept of ['text/csv', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet']) {
      const id = await bigJob(server.origin, 150_000);
      const read = await readAcrossDeletion(`${server.origin}/v2.7/email-validations/${id}/entries`, accept, id);
      expect(read.status, accept).toBe(200);
      expect(read.ended, accept).toBe('aborted');
    }
  }, 120_000);

  it('ends a 1.4 snapshot as an aborted response, never as complete-looking JSON', async () => {
    const id = await bigJob(server.origin, 150_000, 'v1.4');
    const read = await readAcrossDeletion(`${server.origin}/v1.4/email-validations/${id}`, 'application/json', id);
    expect(read.status).toBe(200);
    expect(read.ended).toBe('aborted');
  }, 120_000);
});

describe('corruption met during an export', () => {
  it('logs an error naming the job and cuts the CSV or xlsx answer off', async () => {
    for (const [format, accept] of [['csv', 'text/csv'], ['xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet']] as const) {
      const data = join(dir, `corrupt-${format}`);
      const logged = await start(data, PASSWORD, ['--log-level', 'info']);
      let id: string;
      let requestId: string;
      let ended: 'complete' | 'aborted' = 'complete';
      try {
        id = await bigJob(logged.origin, 150_000);
        const response = await fetch(`${logged.origin}/v2.7/email-validations/${id}/entries`, { headers: { ...AUTH, accept } });
        expect(response.status).toBe(200);
        requestId = response.headers.get('x-request-id')!;
        const reader = response.body!.getReader();
        await reader.read();
        // Everything past the database's first page (its header and the schema's root) overwritten while the export
        // runs: the pages it reads next are garbage to SQLite.
        const file = openSync(join(data, 'mailverify.db'), 'r+');
        const garbage = Buffer.alloc(fstatSync(file).size - 4096, 0x5a);
        writeSync(file, garbage, 0, garbage.length, 4096);
        closeSync(file);
        try {
          while (!(await reader.read()).done);
        } catch {
          ended = 'aborted';
        }
        await until(() => logLines(logged.stderr()).some((line) => line.level >= 50 && line.reqId === requestId));
      } finally {
        await logged.stop();
      }
      expect(ended, format).toBe('aborted');
      const lines = logLines(logged.stderr());
      // One error for the export, naming the job and the store's code; nothing else logs the export's failure as an
      // error again (other work meeting the corruption, such as a purge, may log its own).
      const cutOff = lines.find((line) => line.jobId === id! && line.level >= 50);
      expect(cutOff, format).toMatchObject({ msg: 'export cut off: the job store failed while the entries were read', err: { code: 'SQLITE_CORRUPT' } });
      expect(lines.filter((line) => line.level >= 50 && line.reqId === requestId!), format).toEqual([cutOff]);
      expect(logged.stderr()).not.toContain(PASSWORD);
      expect(logged.stderr()).not.toContain(AUTH.authorization.slice('Basic '.length));
    }
  }, 120_000);
});

/** The JSON lines of a server's log. */
function logLines(stderr: string): any[] {
  return stderr.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
}

/** A completed job of `count` entries (offline checks: done at once). */
async function bigJob(origin: string, count: number, path = 'v2.7'): Promise<string> {
  const entries = Array.from({ length: count }, (_, i) => ({ inputData: `user${i}@example${i % 97}.com`, custom: `row ${i}` }));
  const response = await fetch(`${origin}/${path}/email-validations${path === 'v2.7' ? '?waitTime=30000' : ''}`, {
    method: 'POST',
    headers: JSON_AUTH,
    body: JSON.stringify({ entries }),
  });
  const body: any = await response.json();
  const id: string = path === 'v2.7' ? body.overview.id : body.uniqueID;
  // Wait until it is complete (the 1.4 POST answers at once).
  for (;;) {
    const overview: any = await (await fetch(`${origin}/v2.7/email-validations/${id}/overview`, { headers: AUTH })).json();
    if (overview.status === 'Completed') return id;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
