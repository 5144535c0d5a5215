import { AppError, toAppError, type OnPremGuard } from '../base/index.js';
import { UpstreamClient, UpstreamErrorCode, upstreamKey } from '../upstream/index.js';
import type { DriverIo, HttpAnswer, LifecycleTargetConfig } from './drivers/index.js';
import { LifecycleErrorCode } from './errors.js';
import type { LifecycleFleet } from './ports.js';

const MAX_BODY_BYTES = 256 * 1024;

/**
 * The clients of the absolute URLs drivers call (a router's admin API), one per origin, each checked
 * against the on-prem rule when made (the config check refuses other router URLs; this counts what
 * slips by). Owned by the runner, closed with it.
 */
export class UrlClients {
  private readonly byOrigin = new Map<string, UpstreamClient>();

  constructor(private readonly offPrem: OnPremGuard | null) {}

  /** The client of `url`'s origin and the path to send. Throws ONPREM_REFUSED for a URL off this machine. */
  at(url: string): { client: UpstreamClient; path: string } {
    const u = new URL(url);
    let client = this.byOrigin.get(u.origin);
    if (!client) {
      client = UpstreamClient.forUrl(u.origin, { onPrem: this.offPrem, purpose: 'lifecycle' }, { connections: 4 });
      this.byOrigin.set(u.origin, client);
    }
    return { client, path: `${u.pathname}${u.search}` };
  }

  async close(): Promise<void> {
    const all = [...this.byOrigin.values()];
    this.byOrigin.clear();
    await Promise.allSettled(all.map((c) => c.destroy()));
  }
}

/**
 * HTTP to a service through its tunnel's client (paths) or to an absolute URL (router admin API), with a
 * deadline; and read-only commands on its host (`ss`). Calls that change the server (POST) go on a
 * connection of their own and are never sent twice; reads share the client's keep-alive connections.
 */
export function httpIo(target: LifecycleTargetConfig, fleet: LifecycleFleet, urls: UrlClients): DriverIo {
  return {
    async http(method, where, body, timeoutMs): Promise<HttpAnswer> {
      // A router URL on a tunnel's public port goes to its private end: the public one refuses admin paths.
      const to = where.url
        ? (fleet.upstreamAt?.(where.url) ?? urls.at(where.url))
        : { client: fleet.upstream(upstreamKey(target.label, target.serviceId)), path: where.path ?? '' };
      try {
        const res = await to.client.request({
          method,
          path: to.path,
          body,
          deadlineMs: timeoutMs,
          maxBodyBytes: MAX_BODY_BYTES,
          overflow: 'truncate',
          // A POST that met a connection the server had just closed must not be sent again on a guess.
          freshConnection: method !== 'GET',
        });
        return { status: res.status, text: res.text };
      } catch (err) {
        const e = toAppError(err);
        const timedOut = e.code === UpstreamErrorCode.TIMEOUT;
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
