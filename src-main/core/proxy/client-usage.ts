// Per-client usage over a window for the Clients panel, from the request log:
// counts, token sums and errors by code in two grouped queries over the
// window's rows, and the cost by the same split cost.summary's byClient uses
// (cost/costShares over the answered rows' spans: GPU time shared among
// concurrent requests of every client, so one client's share depends on the
// others' and all of the window's answered rows are read).
import type Database from 'better-sqlite3';
import type { ClientErrorCount, ClientUsage, ClientUsageRow, ClientUsageWindow, CostShare, TokenView } from '../../../src-preload/contract/index.js';
import { monthStartUtc } from '../budget/index.js';
import { costShares, estimate, spanFromRequestRow, type RequestSpan } from '../cost/index.js';
import type { RequestWindows } from './request-window.js';

/**
 * How long a window's cost split is reused. The split reads every answered row of the window into
 * memory (~1 s per 300,000 rows on a loaded 2-core machine), so the long windows are not redone on
 * every refresh; counts and errors are always fresh, and the answer says when its cost was computed.
 */
const COST_TTL_MS: Record<ClientUsageWindow, number> = { '1h': 0, '24h': 15_000, '7d': 120_000, '30d': 300_000, month: 300_000 };

const WINDOW_MS: Record<Exclude<ClientUsageWindow, 'month'>, number> = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };

export function windowBounds(window: ClientUsageWindow, now: number): { fromMs: number; toMs: number } {
  return { fromMs: window === 'month' ? monthStartUtc(now) : now - WINDOW_MS[window], toMs: now };
}

interface CountRow {
  client: string;
  requests: number;
  answered: number;
  tokens_in: number | null;
  with_in: number;
  tokens_out: number | null;
  with_out: number;
  last_seen: number | null;
}

interface ErrorRow {
  client: string;
  code: string | null;
  status: number;
  n: number;
}

export interface ClientUsageSources {
  db: Database.Database;
  windows: RequestWindows;
  /** The token rows as listed (revoked ones too). */
  tokens: () => readonly TokenView[];
  /** Whether anonymous loopback is on now (then it is listed with or without traffic). */
  anonymousEnabled: () => boolean;
  /** A host's price per hour (USD); null without one — that host's share is unknown, never $0. */
  priceOf: (host: string) => number | null;
  /** Makes the request log's buffered rows visible to the queries. */
  flush: () => void;
}

/** Clients that are not clients: refused before anyone was known, and Prometheus scrapes. */
const NOT_CLIENTS = new Set(['unauthenticated', 'metrics']);

export class ClientUsageQuery {
  private readonly counts: Database.Statement<[number, number], CountRow>;
  private readonly errors: Database.Statement<[number, number], ErrorRow>;
  private readonly oldest: Database.Statement<[], { oldest: number | null }>;
  private readonly costCache = new Map<ClientUsageWindow, { at: number; costs: Map<string, CostShare> }>();

  constructor(private readonly sources: ClientUsageSources) {
    const { db } = sources;
    this.counts = db.prepare(
      `SELECT client, COUNT(*) AS requests, SUM(status < 400) AS answered,
              SUM(tokens_in) AS tokens_in, COUNT(tokens_in) AS with_in, SUM(tokens_out) AS tokens_out, COUNT(tokens_out) AS with_out,
              MAX(ts) AS last_seen
         FROM requests WHERE ts >= ? AND ts < ? GROUP BY client`,
    );
    this.errors = db.prepare(
      `SELECT client, error_code AS code, status, COUNT(*) AS n
         FROM requests WHERE ts >= ? AND ts < ? AND status >= 400 GROUP BY client, error_code, status`,
    );
    this.oldest = db.prepare('SELECT MIN(ts) AS oldest FROM requests');
  }

  usage(window: ClientUsageWindow, now: number): ClientUsage {
    this.sources.flush();
    const { fromMs, toMs } = windowBounds(window, now);
    const counts = new Map(this.counts.all(fromMs, toMs).map((r) => [r.client, r]));
    const errors = errorsByClient(this.errors.all(fromMs, toMs));
    const { at: costAt, costs } = this.costsOf(window, fromMs, toMs);

    const tokens = new Map<string, TokenView>();
    // A name freed by a revocation may be taken again: the live token is the one listed.
    for (const t of this.sources.tokens()) if (!tokens.has(t.name) || tokens.get(t.name)!.revokedAt !== null) tokens.set(t.name, t);
    const names = new Set<string>();
    for (const t of tokens.values()) if (t.revokedAt === null || counts.has(t.name)) names.add(t.name);
    for (const c of counts.keys()) if (!NOT_CLIENTS.has(c)) names.add(c);
    if (this.sources.anonymousEnabled()) names.add('anonymous');

    const clients = [...names].map((name) => rowOf(name, tokens.get(name) ?? null, counts.get(name), errors.get(name) ?? [], costs.get(name)));
    return { at: now, window, fromMs, toMs, costAt, clients, oldestRowTs: this.oldest.get()?.oldest ?? null };
  }

  /** cost.summary's byClient split over the window, reused for the window's TTL. */
  private costsOf(window: ClientUsageWindow, fromMs: number, toMs: number): { at: number; costs: Map<string, CostShare> } {
    const cached = this.costCache.get(window);
    if (cached && toMs >= cached.at && toMs - cached.at < COST_TTL_MS[window]) return cached;
    const spans = this.sources.windows.answered(fromMs, toMs).map(spanFromRequestRow).filter((s): s is RequestSpan => s !== null);
    const costs = new Map(costShares(spans, (s) => s.client, this.sources.priceOf, { fromMs, toMs }).map((c) => [c.key, c]));
    const fresh = { at: toMs, costs };
    this.costCache.set(window, fresh);
    return fresh;
  }
}

function rowOf(client: string, token: TokenView | null, c: CountRow | undefined, errors: ClientErrorCount[], cost: CostShare | undefined): ClientUsageRow {
  const requests = c?.requests ?? 0;
  // No request: nothing was used, a known zero. Requests none of which reported usage: unknown.
  const sum = (total: number | null | undefined, withValue: number | undefined) => (requests === 0 ? 0 : withValue ? (total ?? 0) : null);
  return {
    client,
    kind: token !== null ? 'token' : client === 'anonymous' ? 'anonymous' : 'internal',
    token,
    requests,
    answered: c?.answered ?? 0,
    tokensIn: sum(c?.tokens_in, c?.with_in),
    tokensOut: sum(c?.tokens_out, c?.with_out),
    requestsWithoutTokens: cost?.requestsWithoutTokens ?? 0,
    // No answered request that reached a server: no GPU time was this client's.
    cost: cost?.cost ?? estimate(0, 'USD', 'no answered request of this client reached a server in the window'),
    gpuSeconds: cost?.gpuSeconds ?? 0,
    errors,
    lastSeenAt: c?.last_seen ?? null,
  };
}

function errorsByClient(rows: readonly ErrorRow[]): Map<string, ClientErrorCount[]> {
  // A code is counted once per client; its status is the one it came with most often.
  const byClient = new Map<string, Map<string, { status: number; best: number; n: number }>>();
  for (const r of rows) {
    const code = r.code ?? `http_${r.status}`;
    const codes = byClient.get(r.client) ?? new Map<string, { status: number; best: number; n: number }>();
    const e = codes.get(code) ?? { status: r.status, best: 0, n: 0 };
    e.n += r.n;
    if (r.n > e.best) {
      e.best = r.n;
      e.status = r.status;
    }
    codes.set(code, e);
    byClient.set(r.client, codes);
  }
  const out = new Map<string, ClientErrorCount[]>();
  for (const [client, codes] of byClient) {
    out.set(
      client,
      [...codes.entries()].map(([code, e]) => ({ code, status: e.status, requests: e.n })).sort((a, b) => b.requests - a.requests || a.code.localeCompare(b.code)),
    );
  }
  return out;
}
