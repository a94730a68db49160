/**
 * User passwords, kept only as memory-hard hashes: argon2id (RFC 9106) through the `argon2` package (the reference C
 * implementation), in the PHC string form (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`), which carries its own salt and
 * parameters so a hash made under older parameters still verifies.
 */
import { argon2id, hash, needsRehash, verify } from 'argon2';

/**
 * argon2id with 19 MiB of memory, 2 passes and 1 lane: the first configuration recommended by the OWASP Password
 * Storage Cheat Sheet (https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html#argon2id).
 * Some tens of milliseconds of one core per hash or verification (on the libuv thread pool, off the event loop); salt
 * (16 bytes) and output (32 bytes) are the library's defaults.
 */
export const PASSWORD_HASH_PARAMETERS = {
  type: argon2id,
  /** KiB: 19 MiB. */
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

/**
 * The hash of a random password nobody kept, made once with PASSWORD_HASH_PARAMETERS: an unknown username is verified
 * against it, so that it costs the time of a wrong password (a test checks that its parameters are the current ones).
 */
export const DUMMY_PASSWORD_HASH = '$argon2id$v=19$m=19456,p=1,t=2$TMEHTzX5zBowOQqrn+MR6Q$y0Ce42/o6uk3eqcbkLlXwrSUE7yzFgPL5cooQQo0t0c';

/** A new hash of `password` with a random salt, as a PHC string. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH_PARAMETERS);
}

/** Whether `password` is the one `passwordHash` was made of; false, never an error, for a malformed hash. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/**
 * One verification against the dummy hash, always false: what a sign-in with an unknown username does, so that the
 * answer takes as long as for a wrong password and does not tell whether the username exists.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  await verifyPassword(DUMMY_PASSWORD_HASH, password);
  return false;
}

/**
 * Whether a stored hash was made under other parameters than PASSWORD_HASH_PARAMETERS (or is not readable): after a
 * successful sign-in its password can be hashed again with the current ones.
 */
export function passwordNeedsRehash(passwordHash: string): boolean {
  try {
    return !passwordHash.startsWith('$argon2id$') || needsRehash(passwordHash, PASSWORD_HASH_PARAMETERS);
  } catch {
    return true;
  }
}
