// How a `gpu-console` command reaches the core: always through the contract,
// like the UI. To the console running on the data dir (its web bridge, found
// through ready.json) when there is one, else to a core started in this process
// for this one command (offline: no demo fleet, no SSH session, the proxy on a
// free loopback port; the same services, rules and audit rows). Either way the
// actor is `operator:<user>@cli`. No file of the CLI opens the database itself.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ChannelInput, ChannelOutput, InvokeChannel } from '../../src-preload/contract/index.js';
import { createApi } from '../core/api.js';
import { startApp } from '../core/app.js';
import { AppError, createLogger } from '../core/base/index.js';
import { findRunningConsole } from '../core/instance/index.js';
import { unwrapAnswer } from './answer.js';
import { CliErrorCode } from './errors.js';
import { logLine } from './output.js';
import { callRunningConsole } from './bridge-client.js';
import { VERSION } from './version.js';

/** The database file a core keeps in its data dir (core/app.ts). */
export const DB_NAME = 'gpu-console.db';

export type ConsoleCall = <C extends InvokeChannel>(channel: C, input: ChannelInput<C>, options?: { timeoutMs?: number }) => Promise<ChannelOutput<C>>;

export interface ConsoleSession {
  call: ConsoleCall;
  /** True: the console running on the data dir answers; false: a core started for this command. */
  running: boolean;
}

export interface ConsoleOptions {
  /** The in-process core's config file (default `<data dir>/config.yaml`); a running console keeps its own. */
  configFile?: string | null;
  /** A read: with no console running and no database in the data dir, fail CLI_NO_DATABASE instead of creating one. */
  requireDatabase?: boolean;
}

/**
 * Runs `fn` against the console of `dataDir`. Calls made in one session reach the same core (an import's
 * preview and its apply); the in-process core is disposed when `fn` settles.
 */
export async function withConsole<T>(dataDir: string, options: ConsoleOptions, fn: (session: ConsoleSession) => Promise<T>): Promise<T> {
  if (findRunningConsole(dataDir)) {
    return fn({ running: true, call: (channel, input, o) => callRunningConsole(dataDir, channel, input, o) });
  }
  if (options.requireDatabase) {
    const file = join(dataDir, DB_NAME);
    if (!existsSync(file)) throw new AppError(CliErrorCode.NO_DATABASE, `no database at ${file} (has a console run with --data-dir ${dataDir}?)`);
  }
  const logger = createLogger({ level: 'error', scope: 'gpu-console', write: logLine });
  const app = await startApp({ mode: 'web', version: VERSION, dataDir, configFile: options.configFile ?? null, offline: true, logger });
  const api = createApi(app, logger.child('api'));
  try {
    return await fn({ running: false, call: async (channel, input) => unwrapAnswer(channel, await api.invoke(channel, input, { caller: 'cli' })) });
  } finally {
    await api.dispose();
    await app.dispose();
  }
}

/** One call to the console of `dataDir` (running, or started in-process for it). */
export function callConsole<C extends InvokeChannel>(
  dataDir: string,
  channel: C,
  input: ChannelInput<C>,
  options: ConsoleOptions & { timeoutMs?: number } = {},
): Promise<ChannelOutput<C>> {
  return withConsole(dataDir, options, (session) => session.call(channel, input, { timeoutMs: options.timeoutMs }));
}
