/**
 * The two lists that come from maintained npm data packages (docs/lists.md compares the candidates and says how to
 * update them).
 *
 * - Disposable domains: `disposable-email-domains-js`, the npm build of the disposable-email-domains/disposable-email-domains
 *   blocklist (CC0). Its CommonJS entry reads its JSON with `require` on the first call, so nothing is parsed until
 *   the first list is built, and it loads the same way bundled or not, from the ESM and the CJS build.
 * - Free providers: `email-providers` `all.json` (ISC). The package's entry is ESM-only and reads the file through
 *   `createRequire`, which does not survive bundling, so the JSON file is imported directly. tsup must bundle it
 *   (as it does for the other ESM-only dependencies): with target node20 esbuild drops the `with { type: 'json' }`
 *   attribute from an external import, and Node then refuses the file in the ESM build. Bundled, the 137 kB are
 *   parsed when the module loads (about 2 ms).
 */
import { disposableEmailBlocklist } from 'disposable-email-domains-js';
import freeProviderData from 'email-providers/all.json' with { type: 'json' };
import { normalizeDomain } from './domain-set.js';

/** The entries of a package list in stored form; anything that is not a host name (`ywoe@mailed.ro`) is dropped. */
export function usableEntries(entries: readonly unknown[]): string[] {
  const usable: string[] = [];
  for (const entry of entries) {
    const name = typeof entry === 'string' ? normalizeDomain(entry) : null;
    if (name !== null) usable.push(name);
  }
  return usable;
}

/** The disposable-domain list as the package ships it (read on the first call, then cached by `require`). */
export function disposableDomainData(): readonly string[] {
  return disposableEmailBlocklist();
}

export function freeProviderDomainData(): readonly string[] {
  return freeProviderData;
}
