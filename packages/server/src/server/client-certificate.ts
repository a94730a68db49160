/**
 * The TLS client certificate of a request. The server asks HTTPS clients for one when it has a client CA (`https.clientCa`
 * of createServer, `serve --tls-client-ca`) and does not require one, so a request may come with a certificate that
 * verified, one that did not (another CA, expired, not for client use), or none.
 */
import type { TLSSocket } from 'node:tls';
import type { FastifyRequest } from 'fastify';

/**
 * The subject CN of the request's client certificate when it verified against the server's client CAs: undefined on
 * plain HTTP, without a certificate, when it did not verify, and when its subject has no CN or more than one (which
 * name it stands for is then unclear). The CN is as written in the certificate; matching it to a username is the
 * caller's (case-insensitively).
 *
 * It trusts the verification of the TLS server that took the connection: a host server that asks for certificates
 * with Node's default CAs would have any publicly issued certificate verify, so only a server given its own client CAs
 * should consult it.
 */
export function verifiedClientName(request: FastifyRequest): string | undefined {
  try {
    const socket = request.raw.socket as Partial<TLSSocket> | null | undefined;
    // `authorized` is true only on a TLS socket whose peer certificate chained to a trusted CA and passed its checks
    // (dates, client use); a certificate that failed leaves it false with an authorizationError. A later handshake on
    // the connection (which the server refuses) would set that error without clearing `authorized`: both are asked.
    if (socket?.authorized !== true || socket.authorizationError != null || typeof socket.getPeerCertificate !== 'function') return undefined;
    const certificate = socket.getPeerCertificate(false) as { subject?: Record<string, unknown> } | null | undefined;
    const commonName = certificate?.subject?.['CN'];
    // Several CNs come as an array; a name is one non-empty string.
    return typeof commonName === 'string' && commonName !== '' ? commonName : undefined;
  } catch {
    // A socket closed or torn down under the request has no certificate to tell of.
    return undefined;
  }
}
