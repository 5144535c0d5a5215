import { request } from 'undici';
import { AppError } from '../core/base/index.js';
import { InstanceErrorCode, findRunningConsole } from '../core/instance/index.js';
import { BridgeErrorCode, type ChannelInput, type ChannelOutput, type InvokeChannel } from '../../src-preload/contract/index.js';
import { unwrapAnswer } from './answer.js';
import { CliErrorCode } from './errors.js';

const TOKEN_HEADER = 'x-gpu-console-token';

/** Calls a channel of the console running on `dataDir`, through its web bridge. */
export async function callRunningConsole<C extends InvokeChannel>(
  dataDir: string,
  channel: C,
  input: ChannelInput<C>,
  options: { timeoutMs?: number } = {},
): Promise<ChannelOutput<C>> {
  const ready = findRunningConsole(dataDir);
  if (!ready) {
    throw new AppError(CliErrorCode.NO_RUNNING_CONSOLE, `no console is running on data dir ${dataDir} (start one with: gpu-console serve)`);
  }
  const url = new URL(ready.ui);
  const token = new URLSearchParams(url.hash.slice(1)).get('token');
  if (!token) throw new AppError(InstanceErrorCode.READY_FILE_INVALID, 'the ready file has no token in its ui URL');
  const response = await request(`${url.origin}/api/${channel}`, {
    method: 'POST',
    // The actor of what this command does is the CLI user (`operator:<user>@cli`), not the web UI.
    headers: { 'content-type': 'application/json', [TOKEN_HEADER]: token, 'x-gpu-console-caller': 'cli' },
    body: JSON.stringify(input),
    // A call answers when it is done (a report export runs live checks and prints a PDF first).
    headersTimeout: options.timeoutMs ?? 10_000,
    bodyTimeout: options.timeoutMs ?? 30_000,
  }).catch((err: unknown) => {
    throw new AppError(CliErrorCode.BRIDGE_UNREACHABLE, `the console at ${url.origin} did not answer: ${(err as Error).message}`, { cause: err });
  });
  const body: unknown = await response.body.json().catch((err: unknown) => {
    throw new AppError(BridgeErrorCode.TRANSPORT, `${channel}: the console at ${url.origin} answered ${response.statusCode} without JSON`, { cause: err });
  });
  return unwrapAnswer(channel, body);
}
