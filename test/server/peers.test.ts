// The defaults of the connection caps: the share of the open-file limit left to clients, and which peers are the
// trusted proxies that the per-address cap spares (read as Fastify reads trustProxy).
import { describe, expect, it } from 'vitest';
import { defaultMaxClientConnections, trustedProxies } from '../../packages/server/src/server/peers.js';

describe('the defaults', () => {
  it('the cap on client connections leaves the server a tenth of its open-file limit, at least 256, at most half', () => {
    expect(defaultMaxClientConnections(20_000)).toBe(18_000);
    expect(defaultMaxClientConnections(1024)).toBe(768);
    expect(defaultMaxClientConnections(256)).toBe(128);
    expect(defaultMaxClientConnections(null)).toBe(0);
  });

  it('trusted proxies are read as Fastify reads trustProxy: addresses, ranges, netmasks, names, hop counts', () => {
    const list = trustedProxies(['192.0.2.7', '10.1.0.0/16', '172.16.0.0/255.240.0.0', 'loopback']);
    expect(['192.0.2.7', '10.1.200.3', '172.31.0.1', '127.9.9.9', '::1'].map(list)).toEqual([true, true, true, true, true]);
    expect(['192.0.2.8', '10.2.0.1', '172.32.0.1', '2001:db8::1'].map(list)).toEqual([false, false, false, false]);
    expect(trustedProxies('192.0.2.7, uniquelocal')('192.168.1.1')).toBe(true);
    expect(trustedProxies(false)('127.0.0.1')).toBe(false);
    expect(trustedProxies(1)('198.51.100.1')).toBe(true);
  });
});
