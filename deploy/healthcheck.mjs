// The container's health check (the Dockerfile's HEALTHCHECK runs it with node: the image has no curl).
//
//   node /app/healthcheck.mjs          GET /health of the server in this container: healthy on 200
//   node /app/healthcheck.mjs worker   a worker answers no HTTP: healthy while its store (MAILVERIFY_STORE) and
//                                      queue (MAILVERIFY_QUEUE) accept TCP connections
//
// The server's address comes from the same MAILVERIFY_* variables it reads (MAILVERIFY_HOST, MAILVERIFY_PORT,
// MAILVERIFY_BASE_PATH, MAILVERIFY_TLS_CERT): give those as variables, not as flags, or this check asks the wrong
// port. It prints one line (never a URL of the store or queue, which may hold a password) and exits 0 or 1.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';

const TIMEOUT_MS = 4_000;
const env = process.env;

try {
  console.log(process.argv[2] === 'worker' ? await workerReachesItsServices() : await serverAnswers());
  process.exit(0);
} catch (error) {
  console.log(`unhealthy: ${error.message}`);
  process.exit(1);
}

async function serverAnswers() {
  // A server on every interface is asked on loopback; one bound to an address of its own, there.
  const host = !env.MAILVERIFY_HOST || ['0.0.0.0', '::'].includes(env.MAILVERIFY_HOST) ? '127.0.0.1' : env.MAILVERIFY_HOST;
  const port = Number(env.MAILVERIFY_PORT || 8080);
  const path = `${(env.MAILVERIFY_BASE_PATH || '').replace(/\/+$/, '')}/health`;
  const tls = Boolean(env.MAILVERIFY_TLS_CERT);
  // Over TLS the certificate names the public host, not loopback: this check asks the process, not the name.
  const request = tls ? httpsRequest : httpRequest;
  const status = await new Promise((resolve, reject) => {
    const req = request({ host, port, path, timeout: TIMEOUT_MS, ...(tls && { rejectUnauthorized: false }) }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
  if (status !== 200) throw new Error(`GET ${path} answered ${status}`);
  return `GET ${path}: 200`;
}

async function workerReachesItsServices() {
  const services = [
    ['store', env.MAILVERIFY_STORE, 5432],
    ['queue', env.MAILVERIFY_QUEUE, 6379],
  ];
  for (const [name, url, defaultPort] of services) {
    if (!url) throw new Error(`MAILVERIFY_${name.toUpperCase()} is not set`);
    const { hostname, port } = new URL(url);
    await new Promise((resolve, reject) => {
      const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || defaultPort), timeout: TIMEOUT_MS });
      socket.once('connect', () => socket.end(resolve));
      socket.once('timeout', () => socket.destroy(new Error(`the ${name} (${hostname}) did not accept a connection within ${TIMEOUT_MS} ms`)));
      socket.once('error', (error) => reject(new Error(`the ${name} (${hostname}): ${error.code ?? error.message}`)));
    });
  }
  return 'the store and the queue accept connections';
}
