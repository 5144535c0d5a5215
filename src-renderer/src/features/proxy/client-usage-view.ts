// The Clients panel's view model: the operator's window and sort (kept in this
// browser's storage, read back through a schema), each client's figures in
// words (unknown is "—" or "unknown", never 0), refusals named by reason, the
// budget this month and the limits in force. Pure (no JSX): tested in Node.
import { z } from 'zod';
import { ClientUsageWindowSchema, type ClientErrorCount, type ClientUsageRow, type ClientUsageWindow, type TokenView } from '../../../../src-preload/contract/index.js';

export const WINDOW_LABELS: Record<ClientUsageWindow, string> = { '1h': 'last hour', '24h': 'last 24 h', '7d': 'last 7 days', '30d': 'last 30 days', month: 'this month (UTC)' };

export const CLIENT_SORT_KEYS = ['client', 'requests', 'tokens', 'cost', 'refused', 'budget', 'lastSeen'] as const;
export type ClientSortKey = (typeof CLIENT_SORT_KEYS)[number];

export const ClientsPrefsSchema = z.object({
  window: ClientUsageWindowSchema.catch('24h'),
  sort: z.enum(CLIENT_SORT_KEYS).catch('requests'),
  descending: z.boolean().catch(true),
});
export type ClientsPrefs = z.infer<typeof ClientsPrefsSchema>;
export const DEFAULT_CLIENTS_PREFS: ClientsPrefs = { window: '24h', sort: 'requests', descending: true };

export function parseClientsPrefs(raw: string | null): ClientsPrefs {
  if (raw === null) return DEFAULT_CLIENTS_PREFS;
  try {
    const parsed = ClientsPrefsSchema.safeParse({ ...DEFAULT_CLIENTS_PREFS, ...(JSON.parse(raw) as object) });
    return parsed.success ? parsed.data : DEFAULT_CLIENTS_PREFS;
  } catch {
    return DEFAULT_CLIENTS_PREFS;
  }
}

/** The proxy's error codes as an operator reads them; others show their code. */
const REASONS: Record<string, string> = {
  rate_limit_rpm: 'rate limit (requests/min)',
  rate_limit_tpm: 'rate limit (tokens/min)',
  model_not_allowed: 'model not allowed',
  budget_exhausted: 'budget used up',
  token_expired: 'token expired',
  token_revoked: 'token revoked',
  class_not_allowed: 'class not allowed',
  queue_full: 'queue full',
  hold_timeout: 'waited too long in the queue',
  model_not_found: 'unknown model',
  model_sleeping: 'model asleep',
  model_waking: 'model waking',
  model_restarting: 'model restarting',
  upstream_draining: 'server draining',
  tunnel_down: 'tunnel down',
  max_tokens_over_ceiling: 'max_tokens over the ceiling',
  invalid_request_id: 'invalid request id',
  invalid_traceparent: 'invalid traceparent',
  upstream_timeout: 'server timed out',
  upstream_unreachable: 'server unreachable',
  upstream_reset: 'server cut the answer',
  client_closed: 'client left',
  body_too_large: 'body too large',
  invalid_json: 'invalid JSON',
  invalid_request: 'invalid request',
};

export function reasonOf(e: ClientErrorCount): string {
  return REASONS[e.code] ?? e.code.replace(/_/g, ' ');
}

/** The proxy refused it (4xx, its own 503s) rather than a server failing it (5xx from upstream). */
export function isRefusal(e: ClientErrorCount): boolean {
  return e.status < 500 || ['model_sleeping', 'model_waking', 'model_restarting', 'upstream_draining', 'tunnel_down', 'proxy_shutting_down'].includes(e.code);
}

export interface ClientRowView {
  readonly client: string;
  readonly anonymous: boolean;
  /** The console's own client (the playground) or a name without a token row. */
  readonly internal: boolean;
  readonly revoked: boolean;
  readonly requests: number;
  readonly tokensText: string;
  readonly tokensTotal: number | null;
  readonly costText: string;
  readonly costUsd: number | null;
  readonly costTitle: string;
  /** Refused by the proxy, by reason, then failed by a server. */
  readonly refused: number;
  readonly failed: number;
  readonly reasons: readonly { readonly text: string; readonly requests: number; readonly refusal: boolean; readonly code: string }[];
  readonly budget: { readonly text: string; readonly pct: number | null } | null;
  readonly limits: readonly string[];
  readonly configOwned: boolean;
  readonly lastSeenAt: number | null;
}

const count = (n: number | null): string => (n === null ? '—' : Math.round(n).toLocaleString('en-US'));

export function usd(v: number): string {
  return v > 0 && v < 0.01 ? `$${v.toFixed(4)}` : `$${v.toFixed(2)}`;
}

/** "rpm 10", "models qwen, gemma", "expires 2027-01-31" — what the proxy enforces for this token. */
export function limitsText(token: TokenView | null): string[] {
  const l = token?.limits;
  if (!l) return [];
  const out: string[] = [];
  if (l.models.length > 0) out.push(`models ${l.models.join(', ')}`);
  if (l.rpm !== null) out.push(`${l.rpm.toLocaleString('en-US')} req/min`);
  if (l.tpm !== null) out.push(`${l.tpm.toLocaleString('en-US')} tok/min`);
  if (l.budgetUsd !== null) out.push(`budget ${usd(l.budgetUsd)}/month (${l.budgetAction === 'refuse' ? 'refuse' : 'warn'} at 100 %)`);
  if (l.expiresAt !== null) out.push(`expires ${new Date(l.expiresAt).toISOString().slice(0, 10)}`);
  return out;
}

function budgetOf(row: ClientUsageRow): ClientRowView['budget'] {
  const limit = row.token?.limits.budgetUsd ?? null;
  if (limit === null) return null;
  const use = row.token?.budget ?? null;
  if (use === null || use.spentUsd === null) return { text: `spend unknown of ${usd(limit)}`, pct: null };
  const pct = use.pctUsed ?? (use.spentUsd / limit) * 100;
  return { text: `${usd(use.spentUsd)} of ${usd(limit)} (${pct.toFixed(0)} %)`, pct };
}

export function clientRowView(row: ClientUsageRow): ClientRowView {
  const reasons = row.errors.map((e) => ({ text: reasonOf(e), requests: e.requests, refusal: isRefusal(e), code: e.code }));
  const sumOf = (refusal: boolean) => reasons.filter((r) => r.refusal === refusal).reduce((s, r) => s + r.requests, 0);
  const tokensTotal = row.tokensIn === null && row.tokensOut === null ? null : (row.tokensIn ?? 0) + (row.tokensOut ?? 0);
  const cost = row.cost;
  return {
    client: row.client,
    anonymous: row.kind === 'anonymous',
    internal: row.kind === 'internal',
    revoked: row.token?.revokedAt !== null && row.token?.revokedAt !== undefined,
    requests: row.requests,
    tokensText: `${count(row.tokensIn)} / ${count(row.tokensOut)}`,
    tokensTotal,
    costText: cost.value === null ? 'unknown' : `${usd(cost.value)} est.`,
    costUsd: cost.value,
    costTitle: cost.value === null ? `Unknown: ${cost.unavailableReason ?? 'no estimate'}` : `Estimate: ${cost.basis}`,
    refused: sumOf(true),
    failed: sumOf(false),
    reasons: [...reasons.filter((r) => r.refusal), ...reasons.filter((r) => !r.refusal)],
    budget: budgetOf(row),
    limits: limitsText(row.token),
    configOwned: (row.token?.configFields.length ?? 0) > 0,
    lastSeenAt: row.lastSeenAt ?? row.token?.lastUsedAt ?? null,
  };
}

function figure(v: ClientRowView, key: ClientSortKey): number | null {
  switch (key) {
    case 'requests':
      return v.requests;
    case 'tokens':
      return v.tokensTotal;
    case 'cost':
      return v.costUsd;
    case 'refused':
      return v.refused + v.failed;
    case 'budget':
      return v.budget?.pct ?? null;
    case 'lastSeen':
      return v.lastSeenAt;
    case 'client':
      return null;
  }
}

/** Sorted by the key; unknown figures last in either direction, then by name. */
export function sortClients(rows: readonly ClientRowView[], key: ClientSortKey, descending: boolean): ClientRowView[] {
  const byName = (a: ClientRowView, b: ClientRowView) => a.client.localeCompare(b.client, undefined, { numeric: true });
  return [...rows].sort((a, b) => {
    if (key === 'client') return descending ? byName(b, a) : byName(a, b);
    const x = figure(a, key);
    const y = figure(b, key);
    if (x === null || y === null) return x === y ? byName(a, b) : x === null ? 1 : -1;
    return (descending ? y - x : x - y) || byName(a, b);
  });
}
