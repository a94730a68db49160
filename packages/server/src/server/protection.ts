/**
 * A user's own protection of its requests, checked once the request is authenticated (root is exempt): its firewall
 * (the client's address, as `clientAddress` reads it, must lie in one of its ranges) and, for a BrowserApp, its trusted
 * origins (the request's `Origin` must match one of its expressions). Either refusal is 403. Sign-in itself
 * (POST /auth/tokens) is not checked, so that its 401 stays the only thing it ever tells; a token it gave is checked at
 * each use.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { firewallAdmits } from '../accounts/firewall.js';
import { originTrusted } from '../accounts/origins.js';
import { forbidden, type Principal } from './access.js';
import { clientAddress } from './auth.js';

/** A 403 problem unless the principal's firewall and trusted origins let this request through. */
export function checkRequestProtection(request: FastifyRequest, reply: FastifyReply, principal: Principal): void {
  const user = principal.user;
  if (principal.isRoot || user === undefined) return;
  const address = clientAddress(request);
  if (!firewallAdmits(user.detail.firewall, address)) {
    throw forbidden(`This user's firewall does not admit requests from ${address}.`);
  }
  const origins = user.detail.trustedOrigin;
  if (origins.isEnabled && !originTrusted(origins.expressions, request.headers.origin)) {
    // The refusal carries no CORS grant: to the page of an untrusted origin the answer is a network error, never
    // something it can read as the service's (and so never mistaken for an accepted request).
    reply.removeHeader('access-control-allow-origin');
    throw forbidden('The request\'s Origin is not one of this user\'s trusted origins.');
  }
}
