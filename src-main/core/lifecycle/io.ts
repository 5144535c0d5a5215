import { Agent, request } from 'undici';
import { AppError, offPremError, toAppError, type OnPremGuard } from '../base/index.js';
import type { DriverIo, HttpAnswer, LifecycleTargetConfig } from './drivers/index.js';
import { LifecycleErrorCode } from './errors.js';
import type { LifecycleFleet } from './ports.js';

const MAX_BODY_BYTES = 256 * 1024;

/**
 * HTTP to a service through its SSH tunnel (paths) or to an absolute URL (router
 * admin API), with a deadline; and read-only commands on its host (`ss`).
 */
export function httpIo(target: LifecycleTargetConfig, fleet: LifecycleFleet, agent: Agent, offPrem: OnPremGuard | null = null): DriverIo {
  return {
    async http(method, where, body, timeoutMs): Promise<HttpAnswer> {
      // A router URL on a tunnel's public port goes to its private end: the public one refuses admin paths.
      const url = where.url ? (fleet.privateUrlOf?.(where.url) ?? where.url) : `${fleet.tunnelUrl(target.label, target.serviceId)}${where.path ?? ''}`;
      // Only the console's tunnels or loopback (config check refuses other router URLs; this counts what slips by).
      if (offPrem && !offPrem.check(url, 'lifecycle')) throw offPremError(url, 'lifecycle');
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        const res = await request(url, {
          method,
          dispatcher: agent,
          headers: body !== null ? { 'content-type': 'application/json' } : {},
          body: body ?? undefined,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          // A fresh connection per call: a keep-alive socket the server (or the tunnel) closed would fail a POST that must not be retried.
          reset: true,
          signal,
        });
        let text = '';
        for await (const chunk of res.body) {
          if (text.length < MAX_BODY_BYTES) text += (chunk as Buffer).toString('utf8');
        }
        return { status: res.statusCode, text };
      } catch (err) {
        const e = toAppError(err);
        const timedOut = signal.aborted || /timeout/i.test(e.message) || /UND_ERR_.*TIMEOUT/.test(e.code);
        throw new AppError(
          LifecycleErrorCode.STEP_FAILED,
          timedOut ? `${method} ${where.path ?? where.url} did not answer within ${timeoutMs} ms` : `${method} ${where.path ?? where.url} failed: ${e.message}`,
          { retryable: true, details: { timedOut }, cause: err },
        );
      }
    },
    exec: (command, timeoutMs) => fleet.exec(target.label, command, { timeoutMs, maxOutputBytes: 256 * 1024 }),
  };
}
