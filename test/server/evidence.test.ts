// Evidence on the server: a verifier with `evidence: true` adds it to 2.x JSON entries (an entry page and a job
// answered at once), as stored (entry pages are read back from the store), and never to exports or to 1.4 entries.
// `serve --evidence` and `check --evidence` as an operator runs them are in test/cli/evidence-cli.test.ts.
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explainSmtpReply } from '../../packages/mailverify/src/index.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { start, type Running } from './http-client.js';

const INPUTS = ['alice@strict-evidence-server.com', 'nobody@strict-evidence-server.com', 'who@missing-evidence-server.com', 'not an address'];

let lab: MailLab;
let server: Running;
let plain: Running;
let jobId: string;
let answered: { evidence?: unknown }[];

beforeAll(async () => {
  lab = await startMailLab({ servers: { strict: { mailboxes: ['alice'] } }, domains: { 'strict-evidence-server.com': ['strict'] } });
  server = await start({ verifier: labVerifierOptions(lab, { evidence: true }) });
  plain = await start({ verifier: labVerifierOptions(lab) });
  const job = await server.call('POST', '/v2.7/email-validations?waitTime=30000', { json: { entries: INPUTS.map((inputData) => ({ inputData })) } });
  expect(job.status, job.text).toBe(200);
  jobId = job.body.overview.id;
  answered = job.body.entries.data;
});

afterAll(async () => {
  await server?.close();
  await plain?.close();
  await lab?.close();
});

describe('evidence in 2.x entries', () => {
  it('a job answered at once and its entry pages carry evidence for the entries that reached DNS or SMTP', async () => {
    const entries = (await server.call('GET', `/v2.7/email-validations/${jobId}/entries`)).body.data;
    const [alice, nobody, missing, broken] = entries;
    expect(alice.status).toBe('Success');
    expect(alice.evidence).toMatchObject({
      mx: [lab.hostOf('strict')],
      exchanger: lab.hostOf('strict'),
      address: lab.addressOf('strict'),
      egress: 'default',
    });
    expect(alice.evidence.replies.map((reply: { code: number }) => reply.code)).toEqual([250, 550]);
    expect(alice.evidence.rule).toBe(explainSmtpReply('rcpt', alice.evidence.replies[1]).rule);
    expect(nobody.evidence.replies).toEqual([
      { phase: 'rcpt', code: 550, enhancedCode: '5.1.1', text: '5.1.1 <nobody@strict-evidence-server.com>: Recipient address rejected: User unknown' },
    ]);
    expect(missing).toMatchObject({ status: 'DomainDoesNotExist', evidence: {} });
    expect(broken.evidence).toBeUndefined();
    // The field comes after the service's.
    expect(Object.keys(alice).at(-1)).toBe('evidence');
    // The answer to the submission held the same.
    expect(answered.map((entry) => entry.evidence)).toEqual(entries.map((entry: { evidence?: unknown }) => entry.evidence));
  });

  it('is in no export, and in no 1.4 entry', async () => {
    const csv = await server.call('GET', `/v2.7/email-validations/${jobId}/entries`, { accept: 'text/csv' });
    expect(csv.status).toBe(200);
    const [header] = parseCsv(csv.text) as string[][];
    expect(header).not.toContain('evidence');
    expect(csv.text).not.toContain(lab.addressOf('strict'));

    const legacy = await server.call('POST', '/v1.4/email-validations', { json: { entries: [{ inputData: INPUTS[1] }] } });
    expect(legacy.status).toBe(202);
    let done = legacy;
    for (let tries = 0; tries < 200 && done.status !== 200; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      done = await server.call('GET', `/v1.4/email-validations/${legacy.body.uniqueID}`);
    }
    expect(done.status).toBe(200);
    expect(done.body.entries[0].status).toBe('MailboxDoesNotExist');
    expect(done.body.entries[0]).not.toHaveProperty('evidence');
  });

  it('a server without it writes no evidence', async () => {
    const job = await plain.call('POST', '/v2.7/email-validations?waitTime=30000', { json: { entries: [{ inputData: INPUTS[1] }] } });
    expect(job.status).toBe(200);
    expect(job.body.entries.data[0].status).toBe('MailboxDoesNotExist');
    expect(job.body.entries.data[0]).not.toHaveProperty('evidence');
  });
});
