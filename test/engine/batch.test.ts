// verifyMany: one entry per input, in order, with duplicate marking (decisions.md §9). Offline (checks: 'syntax').
import { describe, expect, it } from 'vitest';
import { createVerifier, type BatchInput, type Entry } from '../../packages/mailverify/src/index.js';

async function collect(entries: AsyncIterable<Entry>): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const entry of entries) out.push(entry);
  return out;
}

const offline = () => createVerifier({ checks: 'syntax' });

describe('verifyMany', () => {
  it('gives every input exactly one entry, in input order, with its index', async () => {
    const inputs = ['a@example.org', 'bad', '', 'b@example.org', 'c@@example.org'];
    const entries = await collect(offline().verifyMany(inputs, { order: 'input', readAhead: 2 }));
    expect(entries.map((e) => [e.index, e.inputData, e.status])).toEqual([
      [0, 'a@example.org', 'Success'],
      [1, 'bad', 'AtSignNotFound'],
      [2, '', 'AtSignNotFound'],
      [3, 'b@example.org', 'Success'],
      [4, 'c@@example.org', 'InvalidCharacterInSequence'],
    ]);
  });

  it('reads async iterables lazily and keeps custom data', async () => {
    let read = 0;
    async function* source(): AsyncGenerator<BatchInput> {
      for (let i = 0; i < 50; i++) {
        read++;
        yield i % 2 === 0 ? `user${i}@example.org` : { inputData: `user${i}@example.org`, custom: `row ${i}` };
      }
    }
    const iterator = offline().verifyMany(source(), { readAhead: 3, order: 'input' })[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toMatchObject({ index: 0, status: 'Success' });
    expect(read).toBeLessThanOrEqual(4);
    const rest: Entry[] = [];
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) rest.push(r.value);
    expect(rest).toHaveLength(49);
    expect(rest[0]).toMatchObject({ index: 1, custom: 'row 1' });
    expect(rest[1]!.custom).toBeUndefined();
  });

  it('marks Safe duplicates: CFWS, needless quotes, domain case, ASCII local-part case', async () => {
    const inputs = ['John@Example.org', 'john@example.org', '(c) "john"@EXAMPLE.org', 'jöhn@example.org', 'JÖHN@example.org', 'john+x@example.org', 'bad', 'bad'];
    const entries = await collect(offline().verifyMany(inputs, { deduplication: 'Safe', order: 'input' }));
    expect(entries.map((e) => [e.status, e.duplicateOf])).toEqual([
      ['Success', undefined],
      ['Duplicate', 0],
      ['Duplicate', 0],
      ['Success', undefined],
      ['Success', undefined], // non-ASCII letters are not folded
      ['Success', undefined],
      ['AtSignNotFound', undefined],
      ['Duplicate', 6],
    ]);
    expect(entries[1]).toMatchObject({ classification: 'Deliverable', emailAddress: 'john@example.org' });
    expect(entries[7]).toMatchObject({ classification: 'Undeliverable' });
  });

  it("gives a duplicate its own parsed parts, flags and suggestions, and the first one's classification (§9)", async () => {
    const entries = await collect(offline().verifyMany(['Support@Outlook.com', 'support@outlook.com', 'Sales@Hotmial.com', 'sales@hotmial.com'], { deduplication: 'Safe', order: 'input' }));
    expect(entries[1]).toMatchObject({
      status: 'Duplicate',
      duplicateOf: 0,
      classification: entries[0]!.classification,
      emailAddressLocalPart: 'support',
      isRoleAccount: true,
      isFreeEmailAddress: true,
      isDisposableEmailAddress: false,
    });
    expect(entries[3]).toMatchObject({ status: 'Duplicate', duplicateOf: 2, suggestions: ['sales@hotmail.com'] });
  });

  it('marks Relaxed duplicates: +tags everywhere, Gmail dots and googlemail.com, Yahoo -keywords', async () => {
    const inputs = [
      'john.doe@gmail.com',
      'johndoe+news@googlemail.com',
      'J.O.H.N.D.O.E@gmail.com',
      'jane+a@example.org',
      'jane+b@example.org',
      'jane.x@example.org',
      'mary-shop@yahoo.com',
      'mary@yahoo.com',
      'mary-shop@example.org',
      'mary@example.org',
    ];
    const relaxed = await collect(offline().verifyMany(inputs, { deduplication: 'Relaxed', order: 'input' }));
    expect(relaxed.map((e) => e.duplicateOf ?? null)).toEqual([null, 0, 0, null, 3, null, null, 6, null, null]);
    const safe = await collect(offline().verifyMany(inputs, { deduplication: 'Safe' }));
    expect(safe.filter((e) => e.status === 'Duplicate')).toHaveLength(0);
    const off = await collect(offline().verifyMany(['a@x.org', 'a@x.org']));
    expect(off.map((e) => e.status)).toEqual(['Success', 'Success']);
  });

  it('refuses bad options and bad inputs with a TypeError', async () => {
    await expect(collect(offline().verifyMany(['a@x.org'], { concurrency: 10 } as never))).rejects.toThrow(/unknown option concurrency/);
    await expect(collect(offline().verifyMany(['a@x.org'], { priority: 256 }))).rejects.toThrow(/priority/);
    await expect(collect(offline().verifyMany(['a@x.org'], { readAhead: 0 }))).rejects.toThrow(/readAhead/);
    await expect(collect(offline().verifyMany(['a@x.org'], { order: 'random' as never }))).rejects.toThrow(/order/);
    await expect(collect(offline().verifyMany('a@x.org' as never))).rejects.toThrow(/iterable/);
    await expect(collect(offline().verifyMany(['a@x.org'], { deduplication: 'Loose' as never }))).rejects.toThrow(/deduplication/);
    await expect(collect(offline().verifyMany(['a@x.org', 42 as never]))).rejects.toThrow(/input 1/);
    await expect(offline().verify(42 as never)).rejects.toThrow(/expects a string/);
  });
});

describe('createVerifier options', () => {
  it('refuse unknown names anywhere, with their path and the name probably meant', () => {
    expect(() => createVerifier({ check: 'syntax' } as never)).toThrow(/unknown option check \(did you mean checks\?\)/);
    expect(() => createVerifier({ dns: { timeout: 10 } } as never)).toThrow(/unknown option dns\.timeout \(did you mean dns\.timeoutMs\?\)/);
    expect(() => createVerifier({ smtp: { connectTimeout: 10 } } as never)).toThrow(/smtp\.connectTimeout \(did you mean smtp\.connectTimeoutMs\?\)/);
    expect(() => createVerifier({ smtp: { tls: { startTls: true } } } as never)).toThrow(/smtp\.tls\.startTls \(did you mean smtp\.tls\.starttls\?\)/);
    expect(() => createVerifier({ lists: { disposableDomain: ['x.com'] } } as never)).toThrow(/lists\.disposableDomain \(did you mean lists\.disposableDomains\?\)/);
    expect(() => createVerifier({ dns: { cache: { size: 10 } } } as never)).toThrow(/unknown option dns\.cache\.size$/);
    expect(() => createVerifier({ frobnicate: true } as never)).toThrow(/unknown option frobnicate$/);
  });

  it('refuse values of the wrong type, named as the option', () => {
    expect(() => createVerifier({ suggestions: 'no' as never })).toThrow(/option suggestions must be true or false/);
    expect(() => createVerifier({ allowPrivateAddresses: 1 as never })).toThrow(/allowPrivateAddresses/);
    expect(() => createVerifier({ smtp: { tls: { rejectUnauthorized: 'yes' as never } } })).toThrow(/smtp\.tls\.rejectUnauthorized/);
    expect(() => createVerifier({ dns: { cache: { maxEntries: -1 } } })).toThrow(/dns\.cache\.maxEntries/);
    expect(() => createVerifier({ dns: { servers: ['not-an-ip'] } })).toThrow(/option dns\.servers/);
    expect(() => createVerifier({ dns: { resolver: {} as never } })).toThrow(/dns\.resolver/);
    expect(() => createVerifier({ classifications: { NoSuchStatus: 'x' } as never })).toThrow(/NoSuchStatus/);
    expect(() => createVerifier({ classifications: { Success: 3 as never } })).toThrow(/classifications\.Success/);
    expect(() => createVerifier({ smtp: [] as never })).toThrow(/option smtp must be an object/);
    expect(() => createVerifier([] as never)).toThrow(/must be an object/);
  });

  it('suggest the batch option probably meant', async () => {
    await expect(collect(offline().verifyMany(['a@x.org'], { priorty: 1 } as never))).rejects.toThrow(/unknown option priorty \(did you mean priority\?\)/);
    await expect(collect(offline().verifyMany(['a@x.org'], { readahead: 1 } as never))).rejects.toThrow(/did you mean readAhead\?/);
  });

  it('are checked with clear errors', () => {
    expect(() => createVerifier({ checks: 'everything' as never })).toThrow(/checks/);
    expect(() => createVerifier({ quality: 'Best' as never, checks: 'syntax' })).toThrow(/quality/);
    expect(() => createVerifier({ checks: 'dns', dns: { timeoutMs: -1 } })).toThrow(/timeoutMs/);
    expect(() => createVerifier({ checks: 'dns', dns: { servers: '127.0.0.1' as never } })).toThrow(/servers/);
  });

  it('check the SMTP settings too', () => {
    expect(() => createVerifier({ smtp: { port: 0 } })).toThrow(/smtp.port/);
    expect(() => createVerifier({ smtp: { commandTimeoutMs: 0 } })).toThrow(/smtp.commandTimeoutMs/);
    expect(() => createVerifier({ smtp: { maxConnections: Number.NaN } })).toThrow(/smtp.maxConnections/);
    expect(() => createVerifier({ smtp: { transport: {} as never } })).toThrow(/smtp.transport/);
    expect(() => createVerifier({ heloName: 'mx.example.org\r\nRSET' })).toThrow(/heloName/);
    expect(() => createVerifier({ heloName: 'mx.example.org', mailFrom: 'probe@example.org>\r\nDATA' })).toThrow(/mailFrom/);
    expect(() => createVerifier({ mailFrom: 'no-at-sign' })).toThrow(/mailFrom/);
    expect(() => createVerifier({ passes: 0 })).toThrow(/passes/);
    expect(() => createVerifier({ passDelayMs: -5 })).toThrow(/passDelayMs/);
    expect(() => createVerifier({ heloName: 'probe.example.org', mailFrom: 'bounce@example.org' })).not.toThrow();
  });

  it('let the classification names be overridden', async () => {
    const v = createVerifier({ checks: 'syntax', classifications: { AtSignNotFound: 'Typo' } });
    expect(await v.verify('nope')).toMatchObject({ status: 'AtSignNotFound', classification: 'Typo' });
  });
});

describe('settled inputs (a job resumed after a restart)', () => {
  it('yield nothing, count as completed, and stay first occurrences for duplicate marking', async () => {
    const { SETTLED } = await import('../../packages/mailverify/src/engine/batch.js');
    const answered: Entry = {
      index: 0,
      inputData: 'Jo@Example.org',
      classification: 'Risky',
      status: 'ServerIsCatchAll',
      completedOn: '2026-01-01T00:00:00.000Z',
    };
    const progress: number[] = [];
    const inputs = [
      { inputData: 'Jo@Example.org', [SETTLED]: answered },
      'jo@example.org',
      'other@example.org',
    ] as unknown as BatchInput[];
    const entries = await collect(
      offline().verifyMany(inputs, { deduplication: 'Safe', order: 'input', onProgress: (p) => progress.push(p.percentage ?? -1) }),
    );
    expect(entries.map((e) => [e.index, e.status, e.duplicateOf, e.classification])).toEqual([
      [1, 'Duplicate', 0, 'Risky'],
      [2, 'Success', undefined, 'Deliverable'],
    ]);
    expect(entries[0]).toMatchObject({ emailAddress: 'jo@example.org', isFreeEmailAddress: false });
    expect(progress.at(-1)).toBe(1);
  });
});

describe('fairness', () => {
  it('lets the event loop turn while a large offline batch is consumed, so timers and I/O are not starved', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    let ticksSeenMidway = -1;
    let count = 0;
    try {
      const inputs = Array.from({ length: 30_000 }, (_, i) => `user${i}@example.org`);
      for await (const entry of offline().verifyMany(inputs)) {
        count++;
        if (entry.index === 25_000) ticksSeenMidway = ticks;
      }
    } finally {
      clearInterval(timer);
    }
    expect(count).toBe(30_000);
    expect(ticksSeenMidway).toBeGreaterThan(0);
  });
});
