import { describe, expect, it } from 'vitest';
import type { Alert, GpuView, ProxyStats } from '../../../../src-preload/contract/index.js';
import { alertSummaries, hostTroubles, NO_TROUBLE, queuedWhileAsleep, troubleRank } from '../../../../src-renderer/src/features/fleet/overview/host-trouble.js';
import { DEFAULT_PREFS, describeView, overviewView, parsePrefs, showsOverview, tagNames, type OverviewPrefs } from '../../../../src-renderer/src/features/fleet/overview/overview-query.js';
import { OverviewRows, overviewRowOf } from '../../../../src-renderer/src/features/fleet/overview/overview-row.js';
import { moveFrom, navKeyOf } from '../../../../src-renderer/src/features/fleet/overview/tile-nav.js';
import { shortText, tileTone } from '../../../../src-renderer/src/features/fleet/overview/tile-text.js';
import { host, service } from '../fixtures/fleet.js';

const gpu = (index: number, o: Partial<GpuView> = {}): GpuView => ({
  index,
  uuid: null,
  name: 'NVIDIA H100',
  memoryUsedMiB: 40_000,
  memoryTotalMiB: 80_000,
  utilizationPct: 50,
  powerW: 300,
  powerLimitW: 700,
  temperatureC: 60,
  ...o,
});

const alert = (hostLabel: string, o: Partial<Alert> = {}): Alert => ({
  id: `kv_cache:${hostLabel}`,
  kind: 'kv_cache',
  severity: 'warning',
  host: hostLabel,
  serviceId: null,
  model: null,
  message: 'KV cache 97 % for 60 s',
  value: 97,
  threshold: 95,
  raisedAt: 1_000,
  updatedAt: 1_000,
  ...o,
});

const rows = (hosts: ReturnType<typeof host>[], alerts: Alert[] = []) => new OverviewRows().rows(hosts, alertSummaries(alerts), new Map());
const labels = (prefs: Partial<OverviewPrefs>, list: ReturnType<typeof rows>, search = '') =>
  overviewView(list, { ...DEFAULT_PREFS, ...prefs }, search).groups.flatMap((g) => g.rows.map((r) => r.label));

describe('host troubles', () => {
  it('a healthy connected host has none and ranks last', () => {
    const t = hostTroubles(host('a'));
    expect(t).toEqual([]);
    expect(troubleRank(t)).toBe(NO_TROUBLE);
  });

  it('a failed link says so with its code, and nothing about its old figures', () => {
    const h = host('a', { state: 'failed', lastError: { code: 'SSH_CONNECT_REFUSED', message: 'refused', at: 1 }, services: [service('q', { health: 'down', stale: true })] });
    expect(hostTroubles(h).map((t) => t.text)).toEqual(['link down: SSH_CONNECT_REFUSED']);
  });

  it('names a stopped service, a hot GPU, a throttling GPU, a model asleep with requests queued, stale figures', () => {
    const h = host('a', {
      gpus: [gpu(0, { temperatureC: 91 }), gpu(1, { faults: { atMs: 1, pciBusId: null, eccEnabled: null, eccCorrectedVolatile: null, eccUncorrectedVolatile: null, eccCorrectedAggregate: null, eccUncorrectedAggregate: null, retiredPages: null, retiredPagesPending: null, throttleReasons: ['hw_slowdown'], slowdownSinceMs: 5, temperatureCriticalC: null, rasUncorrected: null, rasCorrected: null, source: 'nvidia-smi' } })],
      services: [service('qwen', { health: 'down' }), service('gemma', { stale: true, sleep: 'asleep-1' })],
    });
    const t = hostTroubles(h, undefined, new Map([['gemma', 3]]));
    expect(t.map((x) => x.kind)).toEqual(['stale', 'service-down', 'hot', 'throttle', 'asleep-waiting']);
    expect(t.map((x) => x.text)).toEqual(['gemma stale', 'qwen down', 'GPU 0 91 °C', 'GPU 1 throttling', 'gemma asleep, 3 requests waiting']);
  });

  it('counts open alerts per host, critical first, and words the worst', () => {
    const s = alertSummaries([alert('a'), alert('a', { id: 'x', severity: 'critical', message: 'qwen down', raisedAt: 500 }), alert('b')]);
    expect(s.get('a')).toEqual({ open: 2, critical: 1, top: 'qwen down' });
    expect(hostTroubles(host('a'), s.get('a')).map((t) => [t.kind, t.text])).toEqual([['alert-critical', 'qwen down']]);
  });

  it('queued while asleep comes only from sleeping upstreams with a queue', () => {
    const up = (label: string, serviceId: string, state: 'sleeping' | 'ready', queued: number) => ({ label, serviceId, state, queued }) as unknown as ProxyStats['upstreams'][number];
    const stats = { at: 1, upstreams: [up('a', 'q', 'sleeping', 2), up('a', 'g', 'sleeping', 0), up('b', 'q', 'ready', 9)] } as unknown as ProxyStats;
    const m = queuedWhileAsleep(stats);
    expect([...m.keys()]).toEqual(['a']);
    expect([...m.get('a')!]).toEqual([['q', 2]]);
  });
});

describe('overview rows', () => {
  it('sums only known figures: unknown stays null, never 0', () => {
    const r = overviewRowOf(host('a', { services: [service('q', { requestsRunning: null, generationTokensPerS: null }), service('g', { requestsRunning: null, generationTokensPerS: null })] }));
    expect(r.running).toBeNull();
    expect(r.tokS).toBeNull();
    const down = overviewRowOf(host('b', { state: 'reconnecting' }));
    expect(down.servicesUp).toBe(0);
    expect(down.running).toBeNull();
  });

  it('a row is reused while its host view is the same object, rebuilt when it changes', () => {
    const cache = new OverviewRows();
    const a = host('a');
    const b = host('b');
    const first = cache.rows([a, b], new Map(), new Map());
    const second = cache.rows([a, { ...b, pricePerHourUsd: 2 }], new Map(), new Map());
    expect(second[0]).toBe(first[0]);
    expect(second[1]).not.toBe(first[1]);
    expect(second[1]!.pricePerHour).toBe(2);
  });
});

describe('overview order, search, filters, groups', () => {
  const fleet = rows(
    [
      host('zeta', { tags: { region: 'kl', rack: 'r1' } }),
      host('alpha', { tags: { region: 'sg' } }),
      host('mid', { state: 'reconnecting', tags: { region: 'kl' } }),
      host('beta', { services: [service('qwen', { health: 'down' })] }),
      host('gamma', { gpus: [gpu(0, { temperatureC: 95 })], gpuVendor: 'nvidia' }),
    ],
    [alert('alpha')],
  );

  it('trouble first with the reason, then the rest by name', () => {
    expect(labels({}, fleet)).toEqual(['mid', 'beta', 'gamma', 'alpha', 'zeta']);
  });

  it('sorts by any column; unknown figures last either way', () => {
    const withUnknown = rows([host('a', { pricePerHourUsd: 3 }), host('b', { pricePerHourUsd: null }), host('c', { pricePerHourUsd: 1 })]);
    expect(labels({ sort: 'price' }, withUnknown)).toEqual(['c', 'a', 'b']);
    expect(labels({ sort: 'price', descending: true }, withUnknown)).toEqual(['a', 'c', 'b']);
    expect(labels({ sort: 'name', descending: true }, fleet)).toEqual(['zeta', 'mid', 'gamma', 'beta', 'alpha']);
  });

  it('searches label, model, service id and tags; every word must match', () => {
    expect(labels({ sort: 'name' }, fleet, 'KL')).toEqual(['mid', 'zeta']);
    expect(labels({ sort: 'name' }, fleet, 'region:sg')).toEqual(['alpha']);
    expect(labels({ sort: 'name' }, fleet, 'qwen-model zeta')).toEqual(['zeta']);
    expect(labels({}, fleet, 'nothing-like-this')).toEqual([]);
  });

  it('filters by state', () => {
    expect(labels({ state: 'trouble', sort: 'name' }, fleet)).toEqual(['alpha', 'beta', 'gamma', 'mid']);
    expect(labels({ state: 'healthy' }, fleet)).toEqual(['zeta']);
    expect(labels({ state: 'down' }, fleet)).toEqual(['mid']);
  });

  it('groups by a tag (hosts without it last) and by model', () => {
    const v = overviewView(fleet, { ...DEFAULT_PREFS, group: 'tag:region', sort: 'name' }, '');
    expect(v.groups.map((g) => [g.title, g.rows.map((r) => r.label)])).toEqual([
      ['region: kl', ['mid', 'zeta']],
      ['region: sg', ['alpha']],
      ['(no region)', ['beta', 'gamma']],
    ]);
    const two = rows([host('a', { services: [service('q'), service('g')] }), host('b', { services: [service('g')] })]);
    const m = overviewView(two, { ...DEFAULT_PREFS, group: 'model', sort: 'name' }, '');
    expect(m.groups.map((g) => [g.title, g.rows.map((r) => r.label)])).toEqual([
      ['g-model', ['a', 'b']],
      ['q-model', ['a']],
    ]);
    expect(m.shown).toBe(2);
  });

  it('says what it shows', () => {
    const prefs = { ...DEFAULT_PREFS, state: 'trouble' as const };
    expect(describeView(overviewView(fleet, prefs, 'kl'), prefs, 'kl')).toBe('Showing 1 of 5 hosts · search “kl” · state: trouble · sorted by trouble first');
  });

  it('128 hosts of which half are down: the down half first, by name; all counted', () => {
    const big = rows(Array.from({ length: 128 }, (_, i) => host(`h${String(i).padStart(3, '0')}`, i % 2 === 0 ? { state: 'reconnecting' } : {})));
    const v = overviewView(big, DEFAULT_PREFS, '');
    const order = v.groups[0]!.rows.map((r) => r.label);
    expect(order.slice(0, 64).every((l) => Number(l.slice(1)) % 2 === 0)).toBe(true);
    expect(order.slice(0, 3)).toEqual(['h000', 'h002', 'h004']);
    expect(describeView(v, DEFAULT_PREFS, '')).toBe('Showing all 128 hosts · sorted by trouble first');
  });

  it('odd tag characters are searched as text; a thousand distinct values make as many groups, each named', () => {
    const odd = rows([host('a', { tags: { rack: 'r2/β 东' } }), host('b', { tags: { rack: '<script>' } })]);
    expect(labels({}, odd, 'β')).toEqual(['a']);
    expect(labels({}, odd, '<script>')).toEqual(['b']);
    const many = rows(Array.from({ length: 1000 }, (_, i) => host(`h${i}`, { tags: { serial: `s${i}` } })));
    const v = overviewView(many, { ...DEFAULT_PREFS, group: 'tag:serial' }, '');
    expect(v.groups).toHaveLength(1000);
    expect(v.groups[0]!.title).toBe('serial: s0');
  });

  it('lists tag names most used first, bounded', () => {
    const many = rows(Array.from({ length: 30 }, (_, i) => host(`h${i}`, { tags: { [`t${i}`]: 'x', region: 'kl' } })));
    const names = tagNames(many);
    expect(names[0]).toBe('region');
    expect(names).toHaveLength(20);
  });
});

describe('overview choices', () => {
  it('reads stored choices back through the schema; damaged ones fall back per field', () => {
    expect(parsePrefs(null)).toEqual(DEFAULT_PREFS);
    expect(parsePrefs('not json')).toEqual(DEFAULT_PREFS);
    expect(parsePrefs(JSON.stringify({ sort: 'tokS', group: 'tag:rack', mode: 'cards' }))).toMatchObject({ sort: 'tokS', group: 'tag:rack', mode: 'cards' });
    expect(parsePrefs(JSON.stringify({ sort: 'rm -rf', group: 'tag:bad key;', state: 42 }))).toMatchObject({ sort: 'trouble', group: 'none', state: 'all' });
  });

  it('opens on the overview above 12 hosts unless the operator chose', () => {
    expect(showsOverview(DEFAULT_PREFS, 12)).toBe(false);
    expect(showsOverview(DEFAULT_PREFS, 13)).toBe(true);
    expect(showsOverview({ ...DEFAULT_PREFS, mode: 'cards' }, 64)).toBe(false);
    expect(showsOverview({ ...DEFAULT_PREFS, mode: 'overview' }, 2)).toBe(true);
  });
});

describe('tiles', () => {
  it('shortens text at a word with an ellipsis, never past the budget', () => {
    expect(shortText('svc0 down', 20)).toBe('svc0 down');
    const s = shortText('link lost, reconnecting: SSH_TIMEOUT', 20);
    expect([...s].length).toBeLessThanOrEqual(20);
    expect(s.endsWith('…')).toBe(true);
  });

  it('tone: error for a lost link or a service down, warn for heat, ok when fine', () => {
    expect(tileTone(overviewRowOf(host('a', { state: 'failed' })))).toBe('error');
    expect(tileTone(overviewRowOf(host('a', { gpus: [gpu(0, { temperatureC: 90 })] })))).toBe('warn');
    expect(tileTone(overviewRowOf(host('a')))).toBe('ok');
  });

  it('keys: arrows, j/k, Home/End; up/down go to the nearest tile of the next row', () => {
    expect(navKeyOf({ key: 'j', altKey: false, ctrlKey: false, metaKey: false })).toBe('next');
    expect(navKeyOf({ key: 'k', altKey: false, ctrlKey: true, metaKey: false })).toBeNull();
    const grid = [
      { key: 'a', x: 10, y: 0 },
      { key: 'b', x: 30, y: 0 },
      { key: 'c', x: 50, y: 0 },
      { key: 'd', x: 10, y: 20 },
      { key: 'e', x: 30, y: 20 },
    ];
    expect(moveFrom(grid, 'b', 'down')).toBe('e');
    expect(moveFrom(grid, 'c', 'down')).toBe('e');
    expect(moveFrom(grid, 'e', 'up')).toBe('b');
    expect(moveFrom(grid, 'a', 'up')).toBeNull();
    expect(moveFrom(grid, 'e', 'next')).toBe('e');
    expect(moveFrom(grid, 'c', 'last')).toBe('e');
  });
});
