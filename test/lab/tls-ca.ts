// Certificate authorities made in a test with the `openssl` command line, in a temporary folder: a server CA and the
// server's certificate for 127.0.0.1 and localhost, a client CA and client certificates it signs (any subject, expired,
// for servers only), and another CA whose certificates must not verify against the client CA. EC P-256 keys, so that
// each certificate takes a few milliseconds.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A PEM file: where it is and what it holds. */
export interface PemFile {
  readonly path: string;
  readonly pem: string;
}

/** A certificate and its private key. */
export interface CertifiedKey {
  readonly cert: PemFile;
  readonly key: PemFile;
}

export interface ClientCertificateOptions {
  /** The CA that signs it: the client CA (default) or the other one. */
  readonly signer?: 'client' | 'other';
  /** Its validity ended a day before it was made (default false). */
  readonly expired?: boolean;
  /** What it may be used for (extendedKeyUsage): `client` (default) or `server` only. */
  readonly usage?: 'client' | 'server';
}

export interface TlsLab {
  /** The temporary folder of every file. */
  readonly dir: string;
  /** The CA that signed the server's certificate: what a client trusts (`ca` of node:https). */
  readonly serverCa: CertifiedKey;
  /** The server's certificate, for 127.0.0.1 and localhost. */
  readonly server: CertifiedKey;
  /** The CA the server trusts for client certificates (`https.clientCa`). */
  readonly clientCa: CertifiedKey;
  /** A CA the server does not trust. */
  readonly otherCa: CertifiedKey;
  /**
   * A client certificate. `subject`: a CN, several CNs (each its own RDN, in order), or null for a subject with no CN
   * (only an O).
   */
  clientCertificate(subject: string | readonly string[] | null, options?: ClientCertificateOptions): CertifiedKey;
  /** A file in the lab's folder holding `pem` (a bundle of several CAs, a broken file). */
  file(name: string, pem: string): string;
  /** Removes the folder. */
  close(): void;
}

const CONFIG = `
[req]
distinguished_name = dn
prompt = no
[dn]
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
`;

/** Makes the lab; throws, saying so, where the `openssl` command is missing. */
export function makeTlsLab(): TlsLab {
  const dir = mkdtempSync(join(tmpdir(), 'mailverify-tls-'));
  const config = join(dir, 'openssl.cnf');
  writeFileSync(config, CONFIG);
  let count = 0;
  const read = (path: string): PemFile => ({ path, pem: readFileSync(path, 'utf8') });

  const makeCa = (name: string, commonName: string): CertifiedKey => {
    const cert = join(dir, `${name}.pem`);
    const key = join(dir, `${name}-key.pem`);
    openssl(['req', '-x509', '-config', config, '-extensions', 'ca', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '3650', '-subj', subjectOf([commonName])]);
    return { cert: read(cert), key: read(key) };
  };

  /** A certificate of `subject` signed by `ca`, with the extensions of `section`. */
  const issue = (ca: CertifiedKey, subject: string, section: 'server' | 'client', days: number): CertifiedKey => {
    const name = `${section}-${++count}`;
    const cert = join(dir, `${name}.pem`);
    const key = join(dir, `${name}-key.pem`);
    const request = join(dir, `${name}.csr`);
    openssl(['req', '-new', '-config', config, '-utf8', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', request, '-subj', subject]);
    // A negative number of days puts the end of validity before its start: a certificate already expired.
    openssl(['x509', '-req', '-in', request, '-CA', ca.cert.path, '-CAkey', ca.key.path, '-set_serial', String(count), '-days', String(days), '-extfile', config, '-extensions', section, '-out', cert]);
    return { cert: read(cert), key: read(key) };
  };

  const serverCa = makeCa('server-ca', 'mailverify lab server CA');
  const clientCa = makeCa('client-ca', 'mailverify lab client CA');
  const otherCa = makeCa('other-ca', 'mailverify lab other CA');
  const server = issue(serverCa, subjectOf(['localhost']), 'server', 3650);
  return {
    dir,
    serverCa,
    server,
    clientCa,
    otherCa,
    clientCertificate: (subject, options = {}) =>
      issue(
        options.signer === 'other' ? otherCa : clientCa,
        subject === null ? subjectOf([], 'mailverify lab') : subjectOf(typeof subject === 'string' ? [subject] : subject),
        options.usage === 'server' ? 'server' : 'client',
        options.expired === true ? -1 : 365,
      ),
    file: (name, pem) => {
      const path = join(dir, name);
      writeFileSync(path, pem);
      return path;
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The `-subj` argument: one RDN per CN, then an O when given; `/`, `+`, `=` and `\` escaped. */
function subjectOf(commonNames: readonly string[], organization?: string): string {
  const escape = (value: string): string => value.replace(/[\\/+=]/g, (c) => `\\${c}`);
  const parts = commonNames.map((name) => `/CN=${escape(name)}`);
  if (organization !== undefined) parts.push(`/O=${escape(organization)}`);
  return parts.join('');
}

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: 'pipe' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('these tests need the openssl command line (apt-get install openssl)');
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`openssl ${args[0]} failed: ${stderr || String(error)}`);
  }
}
