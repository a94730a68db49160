// Password hashes with the real argon2: the PHC form and its parameters, verification of the right and wrong passwords,
// malformed hashes answered false (never thrown), the dummy verification of unknown usernames, and rehash detection.
import { argon2id, hash } from 'argon2';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DUMMY_PASSWORD_HASH,
  PASSWORD_HASH_PARAMETERS,
  hashPassword,
  passwordNeedsRehash,
  verifyAgainstDummy,
  verifyPassword,
} from '../../packages/server/src/accounts/passwords.js';

const PASSWORD = 'correct horse battery stäple';

/** The parameters a PHC string names, e.g. { m: '19456', t: '2', p: '1' }. */
function phcParameters(phc: string): Record<string, string> {
  const fields = phc.split('$');
  return Object.fromEntries(fields[3]!.split(',').map((pair) => pair.split('=') as [string, string]));
}

describe('hashPassword and verifyPassword', () => {
  let stored: string;
  beforeAll(async () => {
    stored = await hashPassword(PASSWORD);
  });

  it('makes an argon2id PHC string with the OWASP parameters', () => {
    expect(stored).toMatch(/^\$argon2id\$v=19\$[^$]+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(phcParameters(stored)).toEqual({ m: '19456', t: '2', p: '1' });
    expect(PASSWORD_HASH_PARAMETERS).toMatchObject({ memoryCost: 19_456, timeCost: 2, parallelism: 1 });
    expect(stored).not.toContain(PASSWORD);
  });

  it('accepts the password and refuses others', async () => {
    expect(await verifyPassword(stored, PASSWORD)).toBe(true);
    expect(await verifyPassword(stored, PASSWORD.toUpperCase())).toBe(false);
    expect(await verifyPassword(stored, `${PASSWORD} `)).toBe(false);
    expect(await verifyPassword(stored, '')).toBe(false);
  });

  it('salts each hash', async () => {
    const again = await hashPassword(PASSWORD);
    expect(again).not.toBe(stored);
    expect(await verifyPassword(again, PASSWORD)).toBe(true);
  });

  it('answers false for a malformed hash instead of throwing', async () => {
    for (const malformed of ['', 'garbage', '$argon2id$', '$argon2id$v=19$m=19456,t=2,p=1$zzz$yyy', '$2b$10$abcdefghijklmnopqrstuv']) {
      await expect(verifyPassword(malformed, PASSWORD)).resolves.toBe(false);
    }
  });
});

describe('verifyAgainstDummy', () => {
  it('answers false, whatever the password', async () => {
    expect(await verifyAgainstDummy(PASSWORD)).toBe(false);
    expect(await verifyAgainstDummy('')).toBe(false);
  });

  it('verifies against a well-formed hash with the current parameters (so it costs what a real one does)', () => {
    expect(DUMMY_PASSWORD_HASH.startsWith('$argon2id$v=19$')).toBe(true);
    expect(phcParameters(DUMMY_PASSWORD_HASH)).toEqual({ m: '19456', t: '2', p: '1' });
    expect(passwordNeedsRehash(DUMMY_PASSWORD_HASH)).toBe(false);
  });
});

describe('passwordNeedsRehash', () => {
  it('tells hashes made under other parameters, which still verify', async () => {
    const older = await hash(PASSWORD, { type: argon2id, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    expect(passwordNeedsRehash(older)).toBe(true);
    expect(await verifyPassword(older, PASSWORD)).toBe(true);
  });

  it('asks to rehash what is not an argon2id hash', () => {
    expect(passwordNeedsRehash('garbage')).toBe(true);
    expect(passwordNeedsRehash('$2b$10$abcdefghijklmnopqrstuv')).toBe(true);
  });
});
