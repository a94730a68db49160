// A UDP port on loopback where nothing listens: a DNS server that cannot be reached. A query sent there is refused at
// once (ICMP port unreachable, ECONNREFUSED on the connected socket), without waiting for a timeout.
import { createSocket } from 'node:dgram';

/** `127.0.0.1:PORT` of a port that was free a moment ago (bound, then closed). */
export async function unreachableDnsServer(): Promise<string> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return `127.0.0.1:${port}`;
}
