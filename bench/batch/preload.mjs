// Preload for the peer verifiers (`node --import ./preload.mjs`): they use the system resolver, so this points the
// process at the lab's DNS server (BENCH_DNS, "127.0.0.1:PORT"). dns.setServers covers resolveMx & co (callback and
// promise APIs); dns.lookup, which net.connect uses for host names and which reads /etc/hosts and the system
// resolver instead, is replaced by an A lookup against the same server. No cache, as getaddrinfo has none.
import dns from 'node:dns';
import { isIP } from 'node:net';

const server = process.env.BENCH_DNS;
if (!server) throw new Error('preload: BENCH_DNS is not set');
dns.setServers([server]);
dns.promises.setServers([server]);

const resolver = new dns.Resolver({ timeout: 2000, tries: 2 });
resolver.setServers([server]);

function notFound(hostname, error) {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
    code: error?.code === 'ETIMEOUT' ? 'EAI_AGAIN' : 'ENOTFOUND',
    syscall: 'getaddrinfo',
    hostname,
  });
}

function lookup(hostname, options, callback) {
  if (typeof options === 'function') [callback, options] = [options, {}];
  if (typeof options === 'number') options = { family: options };
  const all = options?.all === true;
  const answer = (addresses) =>
    all ? callback(null, addresses.map((address) => ({ address, family: 4 }))) : callback(null, addresses[0], 4);
  const family = isIP(hostname);
  if (family !== 0) {
    process.nextTick(() => (all ? callback(null, [{ address: hostname, family }]) : callback(null, hostname, family)));
    return;
  }
  resolver.resolve4(hostname, (error, addresses) => {
    if (error || addresses.length === 0) callback(notFound(hostname, error));
    else answer(addresses);
  });
}

dns.lookup = lookup;
dns.promises.lookup = (hostname, options = {}) =>
  new Promise((resolve, reject) =>
    lookup(hostname, options, (error, address, family) => {
      if (error) reject(error);
      else resolve(Array.isArray(address) ? address : { address, family });
    }),
  );
