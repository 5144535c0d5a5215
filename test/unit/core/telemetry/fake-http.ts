import { AppError } from '../../../../src-main/core/base/index.js';
import type { HttpGet } from '../../../../src-main/core/telemetry/index.js';

export type Route = { status: number; text: string } | Error;

/** An HttpGet answering from a table; unknown paths answer 404. Records the paths asked. */
export function fakeGet(routes: Record<string, Route | (() => Route)>): HttpGet & { asked: string[] } {
  const asked: string[] = [];
  const get = (async (path: string) => {
    asked.push(path);
    const r = routes[path];
    const v = typeof r === 'function' ? r() : r;
    if (v === undefined) return { status: 404, text: '{"detail":"Not Found"}' };
    if (v instanceof Error) throw v;
    return v;
  }) as HttpGet & { asked: string[] };
  get.asked = asked;
  return get;
}

export const refused = (): AppError =>
  new AppError('TELEMETRY_SCRAPE_FAILED', 'GET http://127.0.0.1:1/metrics: ECONNREFUSED connect ECONNREFUSED', { retryable: true });
