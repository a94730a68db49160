// Custom classification names (the verifier's classifications option) through a real listening server and the mail
// lab: 2.x entries, status-filtered entry pages, CSV and xlsx exports and the official client show the configured
// names; statuses without one keep the standard name. Then `mailverify serve --config` with qualityLevels and
// classifications, as an operator runs it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { VerifaliaRestClient } from 'verifalia';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTRY_FIELDS } from '../../packages/mailverify/src/engine/entry.js';
import { labVerifierOptions } from '../lab/lab-verifier.js';
import { startMailLab, type MailLab } from '../lab/mail-lab.js';
import { startServe } from '../lab/serve-process.js';
import { ROOT, ROOT_AUTH, ROOT_PASSWORD, basic, callServer, start, type Running } from './http-client.js';

const CLASSIFICATIONS = { Success: 'Good', MailboxDoesNotExist: 'Bounce', DomainDoesNotExist: 'No such domain' };
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const INPUTS = ['ok@strict-names.com', 'gone@strict-names.com', 'who@missing-names.com', 'not an address'];

let lab: MailLab;
let server: Running;
let jobId: string;
const dirs: string[] = [];

beforeAll(async () => {
  lab = await startMailLab({
    servers: { strict: { mailboxes: ['ok'] }, grey: { mailboxes: ['slowpoke', 'patient'], greylist: 2 } },
    domains: { 'strict-names.com': ['strict'], 'grey-names.com': ['grey'] },
  });
  server = await start({ verifier: labVerifierOptions(lab, { classifications: CLASSIFICATIONS }) });
  const job = await server.call('POST', '/v2.7/email-validations?waitTime=30000', { json: { entries: INPUTS.map((inputData) => ({ inputData })) } });
  expect(job.status, job.text).toBe(200);
  jobId = job.body.overview.id;
});

afterAll(async () => {
  await server?.close();
  await lab?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The (status, classification) of each entry in order; the last input is a syntax failure with no name configured. */
const EXPECTED = [
  ['Success', 'Good'],
  ['MailboxDoesNotExist', 'Bounce'],
  ['DomainDoesNotExist', 'No such domain'],
];

describe('configured classification names', () => {
  it('show in the entries of a job, and statuses without a name keep the standard one', async () => {
    const entries = (await server.call('GET', `/v2.7/email-validations/${jobId}/entries`)).body.data;
    expect(entries.slice(0, 3).map((entry: { status: string; classification: string }) => [entry.status, entry.classification])).toEqual(EXPECTED);
    expect(entries[3].classification).toBe('Undeliverable');
  });

  it('show in status-filtered entry pages', async () => {
    const bounced = await server.call('GET', `/v2.6/email-validations/${jobId}/entries?status=MailboxDoesNotExist,DomainDoesNotExist`);
    expect(bounced.body.data.map((entry: { inputData: string; classification: string }) => [entry.inputData, entry.classification])).toEqual([
      ['gone@strict-names.com', 'Bounce'],
      ['who@missing-names.com', 'No such domain'],
    ]);
    const rest = await server.call('GET', `/v2.7/email-validations/${jobId}/entries?status:exclude=MailboxDoesNotExist,DomainDoesNotExist`);
    expect(rest.body.data.map((entry: { classification: string }) => entry.classification)).toEqual(['Good', 'Undeliverable']);
  });

  it('show in CSV and xlsx exports', async () => {
    const csv = await server.call('GET', `/v2.7/email-validations/${jobId}/entries`, { accept: 'text/csv' });
    expect(csv.status).toBe(200);
    const rows = parseCsv(csv.text, { columns: true }) as Record<string, string>[];
    expect(rows.map((row) => [row['status'], row['classification']])).toEqual([...EXPECTED, [rows[3]!['status'], 'Undeliverable']]);

    const response = await fetch(`${server.origin}/v2.7/email-validations/${jobId}/entries?status=MailboxDoesNotExist`, { headers: { authorization: ROOT_AUTH, accept: XLSX_TYPE } });
    expect(response.status).toBe(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(Buffer.from(await response.arrayBuffer()) as unknown as ExcelJS.Buffer);
    const sheet = workbook.worksheets[0]!;
    const column = ENTRY_FIELDS.indexOf('classification') + 1;
    expect(sheet.getRow(1).getCell(column).value).toBe('classification');
    expect(sheet.getRow(2).getCell(column).value).toBe('Bounce');
    expect(sheet.rowCount).toBe(2);
  });

  it('the official client (npm verifalia) reads them', async () => {
    const client = new VerifaliaRestClient({ username: ROOT, password: ROOT_PASSWORD, baseUris: [server.origin] });
    const validation = await client.emailValidations.get(jobId);
    expect(validation!.entries.slice(0, 3).map((entry) => entry.classification)).toEqual(['Good', 'Bounce', 'No such domain']);
  });
});

describe('mailverify serve --config with qualityLevels and classifications', () => {
  it('jobs name the configured level and show the configured names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverify-custom-config-'));
    dirs.push(dir);
    const config = join(dir, 'mailverify.json');
    writeFileSync(
      config,
      JSON.stringify({
        dataDir: 'data',
        logLevel: 'silent',
        dnsServers: [lab.dnsAddress],
        smtpPort: lab.port,
        allowPrivateAddresses: true,
        heloName: 'probe.mailverify-lab.com',
        mailFrom: 'bounce@mailverify-lab.com',
        qualityLevels: [{ id: 'Patient', displayName: 'Patient', passes: 3, passDelay: 100 }],
        classifications: { Success: 'Good', MailboxTemporarilyUnavailable: 'Try later' },
      }),
    );
    const serve = await startServe(['--config', config], { MAILVERIFY_ROOT_PASSWORD: 'serve config password' });
    try {
      const auth = basic('root', 'serve config password');
      const submit = (inputData: string, quality?: string) =>
        callServer(serve.origin, auth, 'POST', '/v2.7/email-validations?waitTime=30000', { json: { entries: [{ inputData }], ...(quality !== undefined && { quality }) } });
      const standard = await submit('slowpoke@grey-names.com');
      expect(standard.body.entries.data[0]).toMatchObject({ status: 'MailboxTemporarilyUnavailable', classification: 'Try later' });
      // Only the third RCPT of a recipient passes the greylisting: the patient level's third pass.
      const patient = await submit('patient@grey-names.com', 'patient');
      expect(patient.body.overview.quality).toBe('Patient');
      expect(patient.body.entries.data[0]).toMatchObject({ status: 'Success', classification: 'Good' });
      const levels = await callServer(serve.origin, auth, 'GET', '/v2.7/email-validations/quality-levels');
      expect(levels.body.data.at(-1)).toEqual({ id: 'Patient', displayName: 'Patient', isDefault: false, isCustom: true, unitPrice: 1, isUnavailable: false });
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  });
});
