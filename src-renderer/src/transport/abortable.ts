// Shared by both transports: a call given up by its caller rejects at once,
// whatever the bridge is still doing with it.
import { cancelledError } from './transport.js';

/**
 * `work`, or a BRIDGE_CANCELLED rejection as soon as `signal` aborts, whichever
 * comes first. A late answer (or failure) of `work` is then dropped.
 */
export function untilAborted<T>(channel: string, work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(cancelledError(channel));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(cancelledError(channel));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
