/**
 * Which provider stands behind a mail exchanger: the given profiles (`smtp.providers`) first, then the built-in
 * table (provider-profiles.ts); the first profile one of whose patterns matches the exchanger's host name wins. An
 * exchanger no profile matches is a provider of its own (its host name is the id), with no rate and the egresses all
 * allowed. A provider's limits count per egress × provider (docs/egress.md#provider-profiles).
 */
import { BoundedCache } from '../../cache/bounded-cache.js';
import { compileWildcard } from '../../text/wildcard.js';
import { describeValue } from './egresses.js';
import { PROVIDER_PROFILES, type ProviderProfile } from './provider-profiles.js';

export { PROVIDER_PROFILES, type BuiltInProviderProfile, type ProviderProfile } from './provider-profiles.js';

/** A provider as the prober uses it. */
export interface Provider {
  /** The profile's id, or the exchanger's host name (an address literal's address) without one. */
  readonly id: string;
  /** The egress ids it may use, in the order the egresses were given. */
  readonly egresses: readonly string[];
  readonly maxConnectionsPerEgress?: number;
  readonly recipientsPerMinute?: number;
  readonly recipientsPerDay?: number;
}

const PROFILE_ID = /^[A-Za-z0-9._-]{1,64}$/u;
const PROFILE_KEYS = new Set(['id', 'match', 'egress', 'maxConnectionsPerEgress', 'recipientsPerMinute', 'recipientsPerDay']);
const LIMITS = ['maxConnectionsPerEgress', 'recipientsPerMinute', 'recipientsPerDay'] as const;
const MAX_PATTERN_LENGTH = 253;

/**
 * Checks provider profiles given as `name` (e.g. `createVerifier: option smtp.providers`): a malformed one is a
 * `TypeError` naming the field. `egressIds`, the ids a profile's `egress` may name (undefined: not checked here).
 */
export function checkProviderProfiles(value: unknown, name: string, egressIds?: readonly string[]): ProviderProfile[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError(`${name} must be an array of provider profiles, got ${describeValue(value)}`);
  const seen = new Set<string>();
  return value.map((given: unknown, index) => {
    const at = `${name}[${index}]`;
    if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new TypeError(`${at} must be an object, got ${describeValue(given)}`);
    const profile = given as Record<string, unknown>;
    for (const key of Object.keys(profile)) if (!PROFILE_KEYS.has(key)) throw new TypeError(`${at} has an unknown key ${JSON.stringify(key)}`);
    const { id, match, egress } = profile;
    if (typeof id !== 'string' || !PROFILE_ID.test(id)) throw new TypeError(`${at}.id must be 1–64 characters of A-Z a-z 0-9 . _ -, got ${describeValue(id)}`);
    if (seen.has(id)) throw new TypeError(`${at}.id ${JSON.stringify(id)} is the id of a profile before it`);
    seen.add(id);
    if (!Array.isArray(match) || match.length === 0) throw new TypeError(`${at}.match must be a non-empty array of wildcard patterns, got ${describeValue(match)}`);
    match.forEach((pattern: unknown, i) => {
      if (typeof pattern !== 'string' || pattern === '' || pattern.length > MAX_PATTERN_LENGTH || /[\s\u0000-\u001f\u007f]/u.test(pattern)) {
        throw new TypeError(`${at}.match[${i}] must be a host name pattern (* any run, ? one character), got ${describeValue(pattern)}`);
      }
    });
    if (egress !== undefined) {
      if (!Array.isArray(egress) || egress.length === 0 || !egress.every((e) => typeof e === 'string')) {
        throw new TypeError(`${at}.egress must be a non-empty array of egress ids, got ${describeValue(egress)}`);
      }
      const unknown = egressIds === undefined ? undefined : egress.find((e) => !egressIds.includes(e));
      if (unknown !== undefined) throw new TypeError(`${at}.egress names ${JSON.stringify(unknown)}, which is no egress (${egressIds!.join(', ')})`);
    }
    for (const limit of LIMITS) {
      const figure = profile[limit];
      if (figure !== undefined && !(Number.isInteger(figure) && (figure as number) > 0)) {
        throw new TypeError(`${at}.${limit} must be a whole number from 1, got ${describeValue(figure)}`);
      }
    }
    return {
      id,
      match: match.map((pattern: string) => pattern.toLowerCase()),
      ...(egress !== undefined && { egress: [...(egress as string[])] }),
      ...Object.fromEntries(LIMITS.filter((limit) => profile[limit] !== undefined).map((limit) => [limit, profile[limit]])),
    } as ProviderProfile;
  });
}

/** The provider of each exchanger host name, for a verifier's profiles and egresses; answers are kept (bounded). */
export class Providers {
  private readonly compiled: { readonly profile: ProviderProfile; readonly tests: ((host: string) => boolean)[] }[];
  private readonly known = new BoundedCache<string, Provider>({ max: 10_000 });
  private readonly byId = new Map<string, Provider>();

  constructor(
    given: readonly ProviderProfile[],
    private readonly egressIds: readonly string[],
    builtIn: readonly ProviderProfile[] = PROVIDER_PROFILES,
  ) {
    this.compiled = [...given, ...builtIn].map((profile) => ({ profile, tests: profile.match.map((pattern) => compileWildcard(pattern.toLowerCase())) }));
  }

  /** The provider of the exchanger `host` (lower case or not, with or without a final dot). */
  of(host: string): Provider {
    const name = host.toLowerCase().replace(/\.$/u, '');
    let provider = this.known.get(name);
    if (provider !== undefined) return provider;
    const found = this.compiled.find(({ tests }) => tests.some((test) => test(name)));
    provider = found === undefined ? { id: name, egresses: this.egressIds } : this.fromProfile(found.profile);
    this.known.set(name, provider);
    return provider;
  }

  /** One Provider object per profile, so that all its exchangers share it. */
  private fromProfile(profile: ProviderProfile): Provider {
    let provider = this.byId.get(profile.id);
    if (provider === undefined) {
      const allowed = profile.egress === undefined ? this.egressIds : this.egressIds.filter((id) => profile.egress!.includes(id));
      provider = {
        id: profile.id,
        egresses: allowed,
        ...(profile.maxConnectionsPerEgress !== undefined && { maxConnectionsPerEgress: profile.maxConnectionsPerEgress }),
        ...(profile.recipientsPerMinute !== undefined && { recipientsPerMinute: profile.recipientsPerMinute }),
        ...(profile.recipientsPerDay !== undefined && { recipientsPerDay: profile.recipientsPerDay }),
      };
      this.byId.set(profile.id, provider);
    }
    return provider;
  }
}
