// What the overview shows and in which order: the operator's choices (kept
// across restarts in this browser's storage, read back through a schema so a
// damaged entry falls back to the defaults), the search, the filters, the
// sort and the grouping; and a sentence saying what is shown.
import { z } from 'zod';
import type { OverviewRow } from './overview-row.js';

export const SORT_KEYS = ['trouble', 'name', 'state', 'services', 'running', 'waiting', 'tokS', 'vram', 'util', 'temp', 'price', 'alerts'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

export const SORT_LABELS: Record<SortKey, string> = {
  trouble: 'Trouble first',
  name: 'Name',
  state: 'State',
  services: 'Services up',
  running: 'Running',
  waiting: 'Waiting',
  tokS: 'Gen tok/s',
  vram: 'VRAM used',
  util: 'GPU util',
  temp: 'Hottest GPU',
  price: 'Run rate',
  alerts: 'Open alerts',
};

export const STATE_FILTERS = ['all', 'trouble', 'healthy', 'down'] as const;
export type StateFilter = (typeof STATE_FILTERS)[number];

/** `none`, `model`, or `tag:<name>`. */
export type GroupBy = 'none' | 'model' | `tag:${string}`;

export const OverviewPrefsSchema = z.object({
  /** `auto`: the overview above AUTO_OVERVIEW_FROM hosts, the cards below. */
  mode: z.enum(['auto', 'overview', 'cards']).catch('auto'),
  sort: z.enum(SORT_KEYS).catch('trouble'),
  descending: z.boolean().catch(false),
  state: z.enum(STATE_FILTERS).catch('all'),
  vendor: z.string().max(32).catch('all'),
  model: z.string().max(256).catch('all'),
  group: z
    .string()
    .max(40)
    .regex(/^(none|model|tag:[A-Za-z][A-Za-z0-9_.-]{0,31})$/)
    .catch('none') as z.ZodType<GroupBy>,
});
export type OverviewPrefs = z.infer<typeof OverviewPrefsSchema>;

export const DEFAULT_PREFS: OverviewPrefs = { mode: 'auto', sort: 'trouble', descending: false, state: 'all', vendor: 'all', model: 'all', group: 'none' };

/** Above this many hosts the fleet opens on the overview (unless the operator chose the cards). */
export const AUTO_OVERVIEW_FROM = 12;

export function parsePrefs(raw: string | null): OverviewPrefs {
  if (raw === null) return DEFAULT_PREFS;
  try {
    const parsed = OverviewPrefsSchema.safeParse({ ...DEFAULT_PREFS, ...(JSON.parse(raw) as object) });
    return parsed.success ? parsed.data : DEFAULT_PREFS;
  } catch {
    return DEFAULT_PREFS;
  }
}

export function showsOverview(prefs: OverviewPrefs, hostCount: number): boolean {
  return prefs.mode === 'overview' || (prefs.mode === 'auto' && hostCount > AUTO_OVERVIEW_FROM);
}

const byName = (a: OverviewRow, b: OverviewRow): number => a.label.localeCompare(b.label, undefined, { numeric: true });
const STATE_ORDER = { failed: 0, reconnecting: 1, disconnected: 2, 'awaiting-trust': 3, connecting: 4, connected: 5 } as const;

/** The sort key's figure; unknown (null) sorts last in either direction. */
function figure(row: OverviewRow, key: SortKey): number | null {
  switch (key) {
    case 'state':
      return STATE_ORDER[row.state];
    case 'services':
      return row.servicesUp;
    case 'running':
      return row.running;
    case 'waiting':
      return row.waiting;
    case 'tokS':
      return row.tokS;
    case 'vram':
      return row.vramPct;
    case 'util':
      return row.utilPct;
    case 'temp':
      return row.hottestC;
    case 'price':
      return row.pricePerHour;
    case 'alerts':
      return row.alerts.open;
    default:
      return null;
  }
}

export function compareRows(key: SortKey, descending: boolean): (a: OverviewRow, b: OverviewRow) => number {
  if (key === 'name') return (a, b) => (descending ? -byName(a, b) : byName(a, b));
  if (key === 'trouble') return (a, b) => (a.rank - b.rank) * (descending ? -1 : 1) || byName(a, b);
  return (a, b) => {
    const x = figure(a, key);
    const y = figure(b, key);
    if (x === null || y === null) return x === y ? byName(a, b) : x === null ? 1 : -1;
    return (x - y) * (descending ? -1 : 1) || byName(a, b);
  };
}

function matchesFilters(row: OverviewRow, prefs: OverviewPrefs, needle: string): boolean {
  if (needle !== '' && !needle.split(/\s+/).every((word) => row.haystack.includes(word))) return false;
  if (prefs.state === 'trouble' && row.troubles.length === 0) return false;
  if (prefs.state === 'healthy' && row.troubles.length > 0) return false;
  if (prefs.state === 'down' && !(row.troubles[0]?.kind === 'down' || row.troubles[0]?.kind === 'trust')) return false;
  if (prefs.vendor !== 'all' && row.vendor !== prefs.vendor) return false;
  if (prefs.model !== 'all' && !row.models.includes(prefs.model)) return false;
  return true;
}

export interface OverviewGroup {
  /** Stable key; `''` when not grouped. */
  readonly key: string;
  /** The heading ("region: kl", "(no region)", a model name); null when not grouped. */
  readonly title: string | null;
  readonly rows: readonly OverviewRow[];
}

export interface OverviewView {
  readonly groups: readonly OverviewGroup[];
  /** Hosts shown (a host in two model groups counts once). */
  readonly shown: number;
  readonly total: number;
}

function groupRows(rows: readonly OverviewRow[], group: GroupBy): OverviewGroup[] {
  if (group === 'none') return [{ key: '', title: null, rows }];
  const groups = new Map<string, OverviewRow[]>();
  const add = (key: string, row: OverviewRow) => {
    const list = groups.get(key);
    if (list) list.push(row);
    else groups.set(key, [row]);
  };
  const tag = group.startsWith('tag:') ? group.slice(4) : null;
  for (const row of rows) {
    if (tag !== null) add(row.tags[tag] ?? '', row);
    else if (row.models.length === 0) add('', row);
    else for (const m of row.models) add(m, row);
  }
  const missing = tag !== null ? `(no ${tag})` : '(no model)';
  return [...groups.entries()]
    .sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a.localeCompare(b, undefined, { numeric: true })))
    .map(([key, list]) => ({ key: `${group}=${key}`, title: key === '' ? missing : tag !== null ? `${tag}: ${key}` : key, rows: list }));
}

export function overviewView(rows: readonly OverviewRow[], prefs: OverviewPrefs, search: string): OverviewView {
  const needle = search.trim().toLowerCase();
  const kept = rows.filter((r) => matchesFilters(r, prefs, needle)).sort(compareRows(prefs.sort, prefs.descending));
  return { groups: groupRows(kept, prefs.group), shown: kept.length, total: rows.length };
}

/** "Showing 12 of 64 hosts · search "kl" · state: trouble". */
export function describeView(view: OverviewView, prefs: OverviewPrefs, search: string): string {
  const parts = [view.shown === view.total ? `Showing all ${view.total} hosts` : `Showing ${view.shown} of ${view.total} hosts`];
  if (search.trim() !== '') parts.push(`search “${search.trim()}”`);
  if (prefs.state !== 'all') parts.push(`state: ${prefs.state}`);
  if (prefs.vendor !== 'all') parts.push(`vendor: ${prefs.vendor}`);
  if (prefs.model !== 'all') parts.push(`model: ${prefs.model}`);
  if (prefs.group !== 'none') parts.push(`grouped by ${prefs.group === 'model' ? 'model' : prefs.group.slice(4)}`);
  parts.push(`sorted by ${SORT_LABELS[prefs.sort].toLowerCase()}${prefs.descending ? ' (descending)' : ''}`);
  return parts.join(' · ');
}

/** Tag names across the fleet (for the group menu), most used first, at most `max`. */
export function tagNames(rows: readonly OverviewRow[], max = 20): string[] {
  const counts = new Map<string, number>();
  for (const r of rows) for (const k of Object.keys(r.tags)) counts.set(k, (counts.get(k) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, max)
    .map(([k]) => k);
}
