import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parsePrometheusText } from '../../../../src-main/core/telemetry/index.js';

// A small fake of the Prometheus HTTP API on 127.0.0.1: each test sets how it
// answers (a canned result, an error, garbage, a stall); requests are recorded.

export type Answer =
  | { kind: 'json'; status?: number; body: unknown }
  | { kind: 'text'; status?: number; contentType?: string; body: string }
  | { kind: 'stall' }
  | { kind: 'reset' };

export interface FakePrometheus {
  url: string;
  /** Every request's URL (path and query string). */
  requests: URL[];
  answer: (url: URL) => Answer;
  close(): Promise<void>;
}

export async function startFakePrometheus(): Promise<FakePrometheus> {
  const stalled = new Set<ServerResponse>();
  const fake: FakePrometheus = {
    url: '',
    requests: [],
    answer: () => ({ kind: 'json', body: { status: 'success', data: { resultType: 'vector', result: [] } } }),
    close: async () => {
      for (const res of stalled) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    fake.requests.push(url);
    const a = fake.answer(url);
    if (a.kind === 'stall') {
      stalled.add(res);
      return;
    }
    if (a.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    const body = a.kind === 'json' ? JSON.stringify(a.body) : a.body;
    res.writeHead(a.status ?? 200, { 'content-type': a.kind === 'json' ? 'application/json' : (a.contentType ?? 'text/plain') });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

export interface Series {
  metric: Record<string, string>;
  value: [number, string];
}

const fmt = (v: number): string => (Number.isNaN(v) ? 'NaN' : v === Infinity ? '+Inf' : v === -Infinity ? '-Inf' : String(v));

/** What Prometheus stores of an exposition scraped with these target labels (without `_created`). */
export function seriesFromText(text: string, target: Record<string, string>, evalS: number): Series[] {
  const out: Series[] = [];
  for (const f of parsePrometheusText(text).families) {
    for (const s of f.samples) {
      if (s.name.endsWith('_created')) continue;
      out.push({ metric: { __name__: s.name, ...s.labels, ...target }, value: [evalS, fmt(s.value)] });
    }
  }
  return out;
}

export const up = (target: Record<string, string>, value: 0 | 1, evalS: number): Series => ({ metric: { __name__: 'up', ...target }, value: [evalS, String(value)] });

/** The `timestamp(up)` part of the source's query, tagged as the source tags it. */
export const scrapedAt = (target: Record<string, string>, scrapedS: number, evalS: number): Series => ({
  metric: { gpu_console_part: 'scraped_at', ...target },
  value: [evalS, String(scrapedS)],
});

export const vector = (result: Series[]) => ({ kind: 'json' as const, body: { status: 'success', data: { resultType: 'vector', result } } });
