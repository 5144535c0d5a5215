import { request, type Dispatcher } from 'undici';
import { AppError } from '../core/base/index.js';
import { InstanceErrorCode, findRunningConsole } from '../core/instance/index.js';
import { BridgeErrorCode, type ChannelInput, type ChannelOutput, type InvokeChannel } from '../../src-preload/contract/index.js';
import { unwrapAnswer } from './answer.js';
import { CliErrorCode } from './errors.js';

const TOKEN_HEADER = 'x-gpu-console-token';

/** Where the running console's web bridge listens and the headers every /api request of the CLI carries. */
export interface RunningBridge {
  origin: string;
  headers: Record<string, string>;
}

/** The bridge of the console running on `dataDir` (from ready.json); CLI_NO_RUNNING_CONSOLE when none runs. */
export function runningBridge(dataDir: string, why = ''): RunningBridge {
  const ready = findRunningConsole(dataDir);
  if (!ready) {
    throw new AppError(CliErrorCode.NO_RUNNING_CONSOLE, `no console is running on data dir ${dataDir}${why} (start one with: gpu-console serve)`);
  }
  const url = new URL(ready.ui);
  const token = new URLSearchParams(url.hash.slice(1)).get('token');
  if (!token) throw new AppError(InstanceErrorCode.READY_FILE_INVALID, 'the ready file has no token in its ui URL');
  // The actor of what this command does is the CLI user (`operator:<user>@cli`), not the web UI.
  return { origin: url.origin, headers: { [TOKEN_HEADER]: token, 'x-gpu-console-caller': 'cli' } };
}

/** Calls a channel of the console running on `dataDir`, through its web bridge. */
export async function callRunningConsole<C extends InvokeChannel>(
  dataDir: string,
  channel: C,
  input: ChannelInput<C>,
  options: { timeoutMs?: number } = {},
): Promise<ChannelOutput<C>> {
  const bridge = runningBridge(dataDir);
  const url = new URL(bridge.origin);
  const response = await request(`${url.origin}/api/${channel}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bridge.headers },
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

/**
 * Opens a long-lived GET of the running console's bridge (its event stream); resolves once it answered
 * with headers. The body ends when `signal` aborts, or after `idleTimeoutMs` without a byte.
 */
export async function openRunningConsoleStream(
  dataDir: string,
  path: string,
  options: { signal: AbortSignal; idleTimeoutMs: number; why?: string },
): Promise<{ origin: string; statusCode: number; body: Dispatcher.ResponseData['body'] }> {
  const bridge = runningBridge(dataDir, options.why);
  const response = await request(`${bridge.origin}${path}`, {
    method: 'GET',
    headers: bridge.headers,
    signal: options.signal,
    headersTimeout: 10_000,
    bodyTimeout: options.idleTimeoutMs,
  }).catch((err: unknown) => {
    throw new AppError(CliErrorCode.BRIDGE_UNREACHABLE, `the console at ${bridge.origin} did not answer: ${(err as Error).message}`, { cause: err });
  });
  return { origin: bridge.origin, statusCode: response.statusCode, body: response.body };
}
