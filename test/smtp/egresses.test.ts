// Egress definitions (decisions §18): SOCKS5 URLs, checks of every field, and no proxy password in any message.
import { describe, expect, it } from 'vitest';
import { parseSocksUrl, readEgresses, showUrl } from '../../packages/mailverify/src/smtp/egress/egresses.js';

const DEFAULTS = { heloName: 'probe.example.net', mailFrom: 'verify@probe.example.net', maxConnections: 50 };
const NAME = 'createVerifier: option smtp.egress';
const SECRET = 'S3cr%2Ft-pw';

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as Error).message;
  }
  throw new Error('expected a TypeError');
}

describe('parseSocksUrl', () => {
  it('reads host, port (1080 by default) and percent-decoded credentials, and shows the URL without the password', () => {
    expect(parseSocksUrl('socks5://proxy.example.net')).toEqual({ host: 'proxy.example.net', port: 1080, shown: 'socks5://proxy.example.net:1080' });
    expect(parseSocksUrl(`socks5://us%40er:${SECRET}@127.0.0.5:1081`)).toEqual({
      host: '127.0.0.5',
      port: 1081,
      username: 'us@er',
      password: 'S3cr/t-pw',
      shown: 'socks5://us%40er@127.0.0.5:1081',
    });
    expect(parseSocksUrl('socks5://[::1]:9050/')).toMatchObject({ host: '::1', port: 9050, shown: 'socks5://[::1]:9050' });
  });

  it.each([
    ['http://user:pw@proxy:8080', /must begin with socks5:\/\//u],
    ['socks4://proxy:1080', /must begin with socks5:\/\//u],
    ['socks5://user:pw@proxy:port', /is not one/u],
    ['socks5://user:pw@proxy:99999', /is not one/u],
    ['socks5://user:pw@proxy:0', /port 0/u],
    ['socks5://user:pw@proxy:1080/path', /path, query or fragment/u],
    ['socks5://user:pw@proxy?x=1', /path, query or fragment/u],
    ['socks5://:pw@proxy', /password but no user/u],
    ['socks5://user:%ZZpw@proxy', /not one|percent-encoded/u],
    ['socks5://us er:pw@proxy', /white space/u],
    ['proxy:1080', /must begin with socks5:\/\/|is not one/u],
  ])('refuses %s with a message that holds no password', (url, expected) => {
    let message = '';
    try {
      parseSocksUrl(url);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(expected);
    expect(message).not.toContain('pw');
  });

  it('never shows a password, even one holding an unencoded / or @', () => {
    expect(showUrl('socks5://user:pa/ss@host:1080')).toBe('"socks5://user@host:1080"');
    expect(showUrl('socks5://user:p@ss@host')).toBe('"socks5://user@host"');
    expect(showUrl('socks5://host:1080')).toBe('"socks5://host:1080"');
    expect(showUrl('user:password')).not.toContain('password');
  });
});

describe('readEgresses', () => {
  it('is the one implicit egress "default" without a list, with the verifier identity', () => {
    const expected = [{ id: 'default', heloName: DEFAULTS.heloName, mailFrom: DEFAULTS.mailFrom, maxConnections: 50 }];
    expect(readEgresses(undefined, DEFAULTS, NAME)).toEqual(expected);
    expect(readEgresses([], DEFAULTS, NAME)).toEqual(expected);
  });

  it('gives each egress its own identity and cap, or the verifier defaults', () => {
    const egresses = readEgresses(
      [
        { id: 'a.1', localAddress: '127.0.0.2', heloName: 'a.example.net', maxConnections: 4, publicAddress: '192.0.2.1' },
        { id: 'proxy_B', proxy: `socks5://u:${SECRET}@127.0.0.9:1080`, mailFrom: 'probe@b.example.net' },
      ],
      DEFAULTS,
      NAME,
    );
    expect(egresses[0]).toEqual({ id: 'a.1', localAddress: '127.0.0.2', heloName: 'a.example.net', mailFrom: DEFAULTS.mailFrom, maxConnections: 4, publicAddress: '192.0.2.1' });
    expect(egresses[1]).toMatchObject({ id: 'proxy_B', heloName: DEFAULTS.heloName, mailFrom: 'probe@b.example.net', maxConnections: 50 });
    expect(egresses[1]!.proxy).toEqual({ host: '127.0.0.9', port: 1080, username: 'u', password: 'S3cr/t-pw', shown: 'socks5://u@127.0.0.9:1080' });
  });

  it.each([
    ['not an array', { id: 'a' }, `${NAME} must be an array`],
    ['not an object', ['a'], `${NAME}[0] must be an object`],
    ['an unknown key', [{ id: 'a', proxyUrl: 'x' }], `${NAME}[0] has an unknown key "proxyUrl"`],
    ['a missing id', [{}], `${NAME}[0].id must be 1–64 characters`],
    ['a bad id', [{ id: 'a b' }], `${NAME}[0].id must be 1–64 characters`],
    ['a long id', [{ id: 'x'.repeat(65) }], `${NAME}[0].id must be 1–64 characters`],
    ['a repeated id', [{ id: 'a' }, { id: 'a' }], `${NAME}[1].id "a" is the id of an egress before it`],
    ['both ways out', [{ id: 'a', localAddress: '127.0.0.2', proxy: 'socks5://p' }], `${NAME}[0] has both localAddress and proxy`],
    ['a local address that is no IP', [{ id: 'a', localAddress: 'eth0' }], `${NAME}[0].localAddress must be an IP address`],
    ['a public address that is no IP', [{ id: 'a', publicAddress: 'mx.example' }], `${NAME}[0].publicAddress must be an IP address`],
    ['a bad HELO name', [{ id: 'a', heloName: 'a b' }], `${NAME}[0].heloName must be a host name`],
    ['a sender with CR LF', [{ id: 'a', mailFrom: 'a@b\r\nRCPT TO:<x@y>' }], `${NAME}[0].mailFrom must be an address`],
    ['a zero cap', [{ id: 'a', maxConnections: 0 }], `${NAME}[0].maxConnections must be a whole number from 1`],
    ['a proxy that is not a string', [{ id: 'a', proxy: 5 }], `${NAME}[0].proxy must be a socks5:// URL`],
  ])('names the field of %s', (_, value, expected) => {
    expect(messageOf(() => readEgresses(value, DEFAULTS, NAME))).toContain(expected);
  });

  it('keeps a malformed proxy URL password out of the TypeError', () => {
    const message = messageOf(() => readEgresses([{ id: 'a', proxy: `socks5://user:${SECRET}@proxy:notaport` }], DEFAULTS, NAME));
    expect(message).toContain(`${NAME}[0].proxy:`);
    expect(message).toContain('socks5://user@proxy:notaport');
    expect(message).not.toContain('S3cr');
  });
});
