// A verifier pointed at a mail lab: its DNS server, its SMTP port, loopback allowed, and short timeouts for tests.
import { createVerifier, type Verifier, type VerifierOptions } from '../../packages/mailverify/src/index.js';
import type { MailLab } from './mail-lab.js';

/** `options` are laid over the lab's settings; `dns` and `smtp` are merged one level deep. */
export function labVerifier(lab: MailLab, options: VerifierOptions = {}, timeouts = { connectTimeoutMs: 1500, commandTimeoutMs: 1500 }): Verifier {
  return createVerifier(labVerifierOptions(lab, options, timeouts));
}

/** The options labVerifier gives createVerifier (for a verifier made elsewhere, such as the server's). */
export function labVerifierOptions(lab: MailLab, options: VerifierOptions = {}, timeouts = { connectTimeoutMs: 1500, commandTimeoutMs: 1500 }): VerifierOptions {
  return {
    heloName: 'probe.mailverify-lab.com',
    mailFrom: 'bounce@mailverify-lab.com',
    allowPrivateAddresses: true,
    ...options,
    dns: { servers: [lab.dnsAddress], timeoutMs: 1000, ...options.dns },
    smtp: { port: lab.port, ...timeouts, ...options.smtp },
  };
}
