/**
 * The server package's commands, `serve`, `worker` and `migrate`: run by `mailverify serve|worker|migrate` (the
 * engine's command hands them over) and by this package's own `mailverify-server` command.
 */
import { commandFailed } from 'mailverify/internal';
import { migrate } from './migrate.js';
import { serve } from './serve.js';

export const SERVER_COMMANDS = ['serve', 'worker', 'migrate'] as const;
export type ServerCommand = (typeof SERVER_COMMANDS)[number];

/** Runs one of the server's commands with its arguments; resolves with the exit code, failures reported on stderr. */
export async function run(command: ServerCommand, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  try {
    if (command === 'serve') return await serve(args, env);
    if (command === 'migrate') return await migrate(args);
    // Loaded only here: the worker's code pulls in the queue's.
    const { worker } = await import('./worker.js');
    return await worker(args, env);
  } catch (error) {
    return commandFailed(command, error);
  }
}
