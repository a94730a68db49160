/**
 * Command-line flags read with `node:util`'s parseArgs, with a usage error that helps: an unknown flag is named with
 * the flag that was probably meant (`--dns-sever`: did you mean --dns-server?).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closestName } from '../options/names.js';
import { UsageError } from './engine-flags.js';

/** parseArgs of `config` (strict); an unknown flag is a UsageError naming it and the closest known flag. */
export function parseFlags<const T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    const code = (error as { code?: string }).code;
    // A misspelt flag with a value (`--prot 8082`) reads as an unknown flag and a stray argument: the flag is named.
    if (code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && code !== 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw error;
    throw new UsageError(unknownFlagMessage(config) ?? (error as Error).message);
  }
}

/**
 * The message for the first unknown flag of the arguments: read again without strictness, as tokens, so that the flag
 * is found by the parser's own reading (a value, `--` and negative numbers included) rather than from its message.
 */
function unknownFlagMessage(config: ParseArgsConfig): string | undefined {
  const known = config.options ?? {};
  const { tokens } = parseArgs({ ...config, strict: false, allowPositionals: true, tokens: true });
  const unknown = tokens.find((token) => token.kind === 'option' && !Object.hasOwn(known, token.name));
  if (unknown === undefined || unknown.kind !== 'option') return undefined;
  const near = unknown.rawName.startsWith('--') ? closestName(unknown.name, Object.keys(known)) : null;
  return `unknown option ${unknown.rawName}${near === null ? '' : ` (did you mean --${near}?)`}`;
}
