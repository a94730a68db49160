// A load balancer on loopback in front of a cluster's API servers: each request goes to the next server in turn (round
// robin), its body streamed through, so that a client's consecutive requests land on different processes, as behind
// a real balancer without sticky sessions.
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Balancer {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  /** How many requests each upstream was given, by its origin. */
  readonly served: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

export async function startBalancer(upstreams: readonly string[]): Promise<Balancer> {
  if (upstreams.length === 0) throw new TypeError('startBalancer: no upstream');
  const served = new Map(upstreams.map((upstream) => [upstream, 0]));
  let next = 0;
  const server: Server = createServer((incoming, outgoing) => {
    const upstream = new URL(upstreams[next++ % upstreams.length]!);
    served.set(upstream.origin, (served.get(upstream.origin) ?? 0) + 1);
    const headers: IncomingHttpHeaders = { ...incoming.headers, 'x-forwarded-for': incoming.socket.remoteAddress ?? '' };
    const forwarded = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'text/plain' });
      outgoing.end('bad gateway');
    });
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
