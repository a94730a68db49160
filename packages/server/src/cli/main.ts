/**
 * The `mailverify-server` command: `mailverify-server serve|worker|migrate [options]`, the same commands as
 * `mailverify serve|worker|migrate` when both packages are installed.
 */
import { VERSION, asksForVersion, closestName } from 'mailverify/internal';
import { SERVER_COMMANDS, run, type ServerCommand } from './commands.js';

const USAGE = `Usage: mailverify-server serve [options]      the verification server (serve --help)
       mailverify-server worker [options]     a cluster worker (worker --help)
       mailverify-server migrate [options]    copy a server's data folder into PostgreSQL (migrate --help)

The same commands as "mailverify serve", "mailverify worker" and "mailverify migrate".`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v' || command === 'version' || asksForVersion(rest)) {
    // The engine's version: the two packages are released together at one version (a test holds them equal).
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (!(SERVER_COMMANDS as readonly string[]).includes(command)) {
    const near = closestName(command, SERVER_COMMANDS);
    process.stderr.write(`mailverify-server: unknown command ${JSON.stringify(command)}${near === null ? '' : ` (did you mean ${near}?)`}\n`);
    process.stderr.write('Run "mailverify-server --help" for usage.\n');
    return 2;
  }
  return await run(command as ServerCommand, rest, process.env);
}
