import { describe, expect, it } from 'vitest';
import {
  EvidenceSchema,
  ReportRequestSchema,
  type ActionView,
  type BenchRun,
  type Check,
  type Evaluation,
  type HostSecurity,
  type InventoryHost,
  type SeriesResult,
} from '../../../../src-preload/contract/index.js';
import { createOffPremCounter } from '../../../../src-main/core/base/index.js';
import { hostCost, windowUsage, type WindowCostSources } from '../../../../src-main/core/cost/index.js';
import { buildEvidence, type ReportSources } from '../../../../src-main/core/report/builder.js';
import { renderHtml } from '../../../../src-main/core/report/render-html.js';
import { renderMarkdown } from '../../../../src-main/core/report/render-markdown.js';
import type { AuditEvent } from '../../../../src-main/core/store/index.js';

const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
const HOUR = 3_600_000;

function check(id: string, verdict: Check['verdict'], evidence = id): Check {
  return { id, label: id, verdict, evidence, at: T0 };
}

function inventory(label: string, over: Partial<InventoryHost> = {}): InventoryHost {
  return {
    label,
    address: `ops@${label}:22`,
    jumpHost: null,
    connection: 'connected',
    liveError: null,
    hostKeyFingerprint: 'SHA256:abc',
    pricePerHourUsd: 2.641736,
    gpus: [{ index: 0, name: 'NVIDIA L20', memoryTotalMiB: 46068, driverVersion: '570.133.20' }],
    services: [
      {
        id: 'vllm',
        kind: 'vllm',
        model: 'Qwen3.6-27B-FP8',
        aliases: [],
        remotePort: 8000,
        slots: 4,
        serverVersion: '0.11.0',
        servedModels: [{ id: 'Qwen3.6-27B-FP8', maxContext: 32768 }],
        health: 'ok',
        config: { id: 'vllm' },
      },
    ],
    ...over,
  };
}

const evaluation = (source: string): Evaluation => ({ source, fromMs: T0, toMs: T0 + HOUR, figures: [] });

function run(over: Partial<BenchRun> = {}): BenchRun {
  const level = {
    phase: 'level' as const,
    level: 1,
    requests: 5,
    completed: 5,
    failed: 0,
    cancelled: 0,
    wallMs: 22_000,
    ttftP50Ms: 136,
    ttftP95Ms: 136,
    latencyP50Ms: 4450,
    latencyP95Ms: 4450,
    itlP50Ms: 50,
    itlP95Ms: 60,
    queueP95Ms: 0,
    outputTokPerS: 17.34,
    requestsPerS: 0.2,
    completionTokens: 385,
    promptTokens: 100,
    errorsByCode: {},
    truncated: 0,
    jsonParsed: null,
    schemaValid: null,
    checked: null,
    partial: false,
  };
  return {
    id: 'run1',
    name: 'poc sweep',
    state: 'completed',
    source: 'console',
    scenario: null,
    upstream: 'l20/vllm',
    host: 'l20',
    model: 'Qwen3.6-27B-FP8',
    slots: 4,
    startedAt: T0 + 10 * 60_000,
    finishedAt: T0 + 20 * 60_000,
    levels: [level, { ...level, level: 2, outputTokPerS: 35.65 }, { ...level, phase: 'stability', level: 4, requests: 40, completed: 40, outputTokPerS: 72.47 }],
    peaks: { vramMiB: 38751, gpuUtilPct: 100, powerW: 262, kvCachePct: 40, samples: 10 },
    baseline: false,
    error: null,
    note: null,
    ...over,
  };
}

function action(over: Partial<ActionView>): ActionView {
  return {
    id: 'a1',
    kind: 'sleep',
    upstream: 'l20/vllm',
    label: 'l20',
    serviceId: 'vllm',
    model: 'Qwen3.6-27B-FP8',
    driver: 'vllm-sleep',
    state: 'verified',
    proposer: 'operator:alice@web',
    reason: 'end of shift',
    repeats: 1,
    nonce: 'SECRET-NONCE-1234',
    requiresTypedLabel: false,
    expectedEffect: 'frees VRAM',
    expectedDowntimeMs: 3000,
    downtimeBasis: 'estimate',
    steps: [],
    inFlight: 0,
    queued: 0,
    createdAt: T0 + 30 * 60_000,
    expiresAt: T0 + 40 * 60_000,
    decidedAt: T0 + 31 * 60_000,
    decision: 'approved',
    approver: { osUser: 'alice', displayName: 'Alice Ops', via: 'web' },
    standingApprovalId: null,
    rejectedBy: null,
    rejectReason: null,
    withdrawnBy: null,
    withdrawReason: null,
    startedAt: T0 + 31 * 60_000,
    finishedAt: T0 + 32 * 60_000,
    progress: null,
    drained: 2,
    aborted: 0,
    observed: ['sleep state asleep-1'],
    error: null,
    ...over,
  };
}

function audit(seq: number, ts: number, type: string, target: string | null, payload: Record<string, unknown> = {}): AuditEvent {
  return { seq, ts, type, actor: 'system', target, payload, prevHash: '0'.repeat(64), hash: String(seq).padStart(64, '0') };
}

function sources(over: Partial<ReportSources> = {}): ReportSources & { liveCalls: string[] } {
  const liveCalls: string[] = [];
  const events = [
    audit(1, T0 + 1000, 'console.started', null),
    audit(2, T0 + 5 * 60_000, 'host.connection.lost', 'l20', { state: 'reconnecting', message: 'keepalive timeout' }),
    audit(3, T0 + 6 * 60_000, 'host.connection.up', 'l20', { state: 'connected' }),
    audit(4, T0 + 40 * 60_000, 'alert.raised', 'l20/vllm', { kind: 'kv_cache', severity: 'critical', message: 'KV cache 97 %' }),
    audit(5, T0 + 45 * 60_000, 'alert.cleared', 'l20/vllm', { kind: 'kv_cache', severity: 'critical', message: 'KV cache 60 %' }),
    audit(6, T0 + 50 * 60_000, 'alert.raised', 'other/llama', { kind: 'throughput', severity: 'warning', message: 'slow' }),
    audit(7, T0 + 31 * 60_000, 'lifecycle.approved', 'l20/vllm', { actionId: 'a1', kind: 'sleep' }),
    audit(8, T0 + 51 * 60_000, 'lifecycle.approved', 'l20/vllm', { actionId: 'a2', kind: 'wake' }),
  ];
  // Telemetry every 10 s with a 5-minute hole from 0:05 to 0:10.
  const t: number[] = [];
  const gen: (number | null)[] = [];
  const busy: (number | null)[] = [];
  for (let x = T0; x < T0 + HOUR; x += 10_000) {
    if (x >= T0 + 5 * 60_000 && x < T0 + 10 * 60_000) continue;
    t.push(x);
    gen.push(72.47);
    busy.push(100);
  }
  const series: SeriesResult = {
    host: 'l20',
    range: '1h',
    fromMs: T0,
    toMs: T0 + HOUR,
    stepMs: 10_000,
    t,
    series: [
      { metric: 'host.gen_tok_s', unit: 'tok/s', avg: gen, max: null },
      { metric: 'host.busy_pct', unit: '%', avg: busy, max: null },
      { metric: 'gpu.0.vram_used_mib', unit: 'MiB', avg: t.map(() => 38751), max: null },
    ],
    tiers: ['10s'],
  };
  const base: ReportSources = {
    now: () => T0 + HOUR,
    actor: 'operator:alice@test',
    console: { version: '0.1.0', mode: 'web', demo: true },
    hosts: () => [
      { label: 'l20', pricePerHourUsd: 2.641736 },
      { label: 'other', pricePerHourUsd: null },
    ],
    liveChecks: async (label) => {
      liveCalls.push(label);
      const security: HostSecurity = {
        host: label,
        checks: [check('sshd.password-auth', 'pass'), check('sshd.root-login', 'unverified', 'sshd -T not permitted'), check('gpu.visible', 'pass'), check('port.loopback.vllm', 'pass')],
      };
      return { inventory: inventory(label), security };
    },
    offlineInventory: (label) => inventory(label, { gpus: [], services: [] }),
    auditEvents: (from, to, prefixes) => events.filter((e) => e.ts >= from && e.ts < to && (!prefixes || prefixes.some((p) => e.type.startsWith(p)))),
    auditCoverage: () => ({ fromSeq: 1, toSeq: 6, headSeq: 6, headHash: 'f'.repeat(64), chainVerified: true, chainProblem: null }),
    benchRuns: () => [{ run: run(), evaluation: evaluation('run poc sweep') }],
    trafficEvaluation: () => evaluation('proxy traffic'),
    actions: () => [action({}), action({ id: 'a2', kind: 'wake', createdAt: T0 + 50 * 60_000 }), action({ id: 'a3', upstream: 'other/llama', label: 'other', serviceId: 'llama' })],
    series: (host) => (host === 'l20' ? series : null),
    // The host view's cost function over the same readings.
    hostCost: (label, from, to) => {
      const readings: WindowCostSources = { series: (q) => (label === 'l20' ? series : { ...series, host: q.host, t: [], series: [] }), requestSpans: () => [], now: () => T0 + HOUR };
      return hostCost({ host: label, pricePerHourUsd: label === 'l20' ? 2.641736 : null, usage: windowUsage(readings, label, from, to) });
    },
    gateMarks: () => new Map([['order.matches', { id: 'order.matches', status: 'pass' as const, note: 'L20 ×1 as ordered', markedBy: 'operator:alice@web', markedAt: T0 }]]),
  };
  return Object.assign({ ...base, ...over }, { liveCalls });
}

const req = (over: Record<string, unknown> = {}) => ReportRequestSchema.parse({ fromMs: T0, toMs: T0 + HOUR, hosts: ['l20'], ...over });

describe('buildEvidence', () => {
  it('contains exactly the facts of the window for the chosen hosts', async () => {
    const src = sources();
    const e = await buildEvidence(req(), src);
    expect(EvidenceSchema.safeParse(e).success).toBe(true);
    expect(src.liveCalls).toEqual(['l20']);
    expect(e.hosts).toEqual(['l20']);
    expect(e.inventory?.map((h) => h.label)).toEqual(['l20']);
    expect(e.benchmarks?.map((r) => r.id)).toEqual(['run1']);
    // Lifecycle: only l20's two actions; approver named; the nonce never copied.
    expect(e.lifecycle?.actions.map((a) => a.id)).toEqual(['a1', 'a2']);
    expect(e.lifecycle).toMatchObject({ proposed: 2, approved: 2, verified: 2, failed: 0, drained: 4 });
    expect(e.lifecycle?.actions[0]?.approvedBy).toBe('Alice Ops (alice, via web)');
    expect(JSON.stringify(e)).not.toContain('SECRET-NONCE');
    // Alerts of l20 only: raised and cleared.
    expect(e.alerts?.map((a) => [a.event, a.kind])).toEqual([
      ['raised', 'kv_cache'],
      ['cleared', 'kv_cache'],
    ]);
    // Health: the 5-minute hole is a stale period; one connection loss.
    const h = e.health![0]!;
    expect(h.stalePeriods).toEqual([{ fromMs: T0 + 5 * 60_000, toMs: T0 + 10 * 60_000, reason: 'no telemetry' }]);
    expect(h.telemetryCoveragePct).toBeCloseTo((330 / 360) * 100, 5);
    expect(h.reconnects).toBe(1);
    // Cost: 55 of the window's 60 min observed at 2.641736 USD/h (the 5-minute hole is not priced);
    // usage-based per 1M output tokens at 72.47 tok/s busy = 10.13 (field notes).
    const c = e.cost![0]!;
    expect(c).toMatchObject({ windowSeconds: 3600, observedSeconds: 3300 });
    expect(c.coveragePct).toBeCloseTo((330 / 360) * 100, 5);
    expect(c.observedUsd.value).toBeCloseTo(2.641736 * (3300 / 3600), 6);
    expect(c.perMillionOutputUsageBased.value).toBeCloseTo(10.13, 2);
    expect(c.perMillionOutputReservationBased.value).toBeCloseTo(10.13, 2); // busy the whole observed time
    expect(c.outputTokens).toBeCloseTo(72.47 * 3300, 6);
    // Charts: tok/s and VRAM lines, and the sweep's bars.
    expect(e.charts.map((x) => x.id).sort()).toEqual(['bench-run1', 'tok-l20', 'vram-l20']);
  });

  it('computes gates from the facts and never turns unverified into pass', async () => {
    const e = await buildEvidence(req(), sources());
    const g = Object.fromEntries(e.gates!.map((x) => [x.id, x]));
    expect(g['auto.ssh.hardened']?.status).toBe('unverified'); // root login could not be read
    expect(g['auto.gpu.visible']?.status).toBe('pass');
    expect(g['auto.port.loopback']?.status).toBe('pass');
    expect(g['auto.api.auth']?.status).toBe('unverified'); // no such check ran
    expect(g['auto.model.serving']?.status).toBe('pass');
    expect(g['auto.bench.figures']?.status).toBe('pass');
    expect(g['auto.bench.stability']?.status).toBe('pass');
    expect(g['auto.cost.baseline']?.status).toBe('pass');
    expect(g['auto.lifecycle.verified']?.status).toBe('pass');
    expect(g['auto.alerts.critical']?.status).toBe('pass'); // raised and cleared
    expect(g['auto.audit.chain']?.status).toBe('pass');
    expect(g['order.matches']).toMatchObject({ kind: 'manual', status: 'pass', note: 'L20 ×1 as ordered', markedBy: 'operator:alice@web' });
    expect(g['isolation.smoke']).toMatchObject({ kind: 'manual', status: 'pending' });
  });

  it('fails gates on failing facts', async () => {
    const e = await buildEvidence(
      req(),
      sources({
        liveChecks: async (label) => ({
          inventory: inventory(label),
          security: { host: label, checks: [check('sshd.password-auth', 'fail', 'passwordauthentication yes'), check('sshd.root-login', 'pass')] },
        }),
        actions: () => [action({ state: 'failed', error: 'VRAM stayed at 38 GiB' })],
        benchRuns: () => [{ run: run({ levels: [{ ...run().levels[2]!, failed: 3 }] }), evaluation: evaluation('x') }],
        auditCoverage: () => ({ fromSeq: 1, toSeq: 6, headSeq: 6, headHash: null, chainVerified: false, chainProblem: 'row 4: hash-mismatch' }),
      }),
    );
    const g = Object.fromEntries(e.gates!.map((x) => [x.id, x]));
    expect(g['auto.ssh.hardened']).toMatchObject({ status: 'fail', evidence: expect.stringContaining('passwordauthentication yes') });
    expect(g['auto.lifecycle.verified']).toMatchObject({ status: 'fail', evidence: expect.stringContaining('VRAM stayed') });
    expect(g['auto.bench.stability']?.status).toBe('fail');
    expect(g['auto.audit.chain']).toMatchObject({ status: 'fail', evidence: expect.stringContaining('row 4') });
  });

  it('an empty window gives an honest, mostly unverified report with notes', async () => {
    const src = sources({
      benchRuns: () => [],
      actions: () => [],
      auditEvents: () => [],
      series: () => null,
      auditCoverage: () => ({ fromSeq: null, toSeq: null, headSeq: 6, headHash: 'f'.repeat(64), chainVerified: true, chainProblem: null }),
    });
    const e = await buildEvidence(req({ hosts: ['other'] }), src);
    expect(e.notes.join(' ')).toMatch(/No benchmark run/);
    expect(e.notes.join(' ')).toMatch(/no event in the window/);
    const g = Object.fromEntries(e.gates!.map((x) => [x.id, x.status]));
    expect(g['auto.bench.figures']).toBe('unverified');
    expect(g['auto.lifecycle.verified']).toBe('unverified');
    expect(g['auto.cost.baseline']).toBe('unverified'); // no price on "other"
    expect(e.health![0]).toMatchObject({ telemetryCoveragePct: null, stalePeriods: [{ reason: 'no telemetry recorded' }] });
    expect(e.cost![0]!.observedUsd).toMatchObject({ value: null, unavailableReason: 'no price configured' });
    expect(e.cost![0]).toMatchObject({ observedSeconds: 0, coveragePct: 0, outputTokens: null });
    expect(e.notes.join(' ')).toContain('The console holds no reading of other in the window');
  });

  it('a host down during live checks is named in the notes and its checks stay unverified', async () => {
    const e = await buildEvidence(
      req(),
      sources({
        liveChecks: async (label) => ({
          inventory: inventory(label, { liveError: 'SSH_CONNECT_FAILED: connection refused', connection: 'reconnecting', services: [{ ...inventory(label).services[0]!, servedModels: [] }] }),
          security: { host: label, checks: [check('gpu.visible', 'unverified', 'host down'), check('sshd.root-login', 'unverified', 'host down')] },
        }),
      }),
    );
    expect(e.notes.join(' ')).toContain('l20 could not be checked live: SSH_CONNECT_FAILED');
    const g = Object.fromEntries(e.gates!.map((x) => [x.id, x.status]));
    expect(g['auto.gpu.visible']).toBe('unverified');
    expect(g['auto.model.serving']).toBe('unverified');
  });

  it('only the chosen sections are filled; live checks are skipped when live is off', async () => {
    const src = sources();
    const e = await buildEvidence(req({ sections: ['benchmarks', 'cost'], live: false }), src);
    expect(src.liveCalls).toEqual([]);
    expect(e.sections).toEqual(['benchmarks', 'cost']);
    expect(e.inventory).toBeNull();
    expect(e.security).toBeNull();
    expect(e.lifecycle).toBeNull();
    expect(e.gates).toBeNull();
    expect(e.benchmarks).not.toBeNull();
  });

  it('refuses a host that is not in the inventory, naming it', async () => {
    await expect(buildEvidence(req({ hosts: ['l20', 'ghost'] }), sources())).rejects.toMatchObject({ code: 'REPORT_UNKNOWN_HOST', message: expect.stringContaining('"ghost"') });
  });
});

describe('gate: upstreams on-prem only', () => {
  const ROUTER = { target: 'l20/vllm', url: 'http://127.0.0.1:9000/admin' };
  const gateOf = async (src: ReportSources, request = req()) => (await buildEvidence(request, src)).gates!.find((g) => g.id === 'auto.upstreams.on-prem');

  it('passes with every service through a tunnel, loopback routers and no refusal, printing the counts per purpose', async () => {
    const seen: (readonly string[])[] = [];
    const counter = createOffPremCounter();
    counter.check('http://127.0.0.1:41000/v1/models', 'probe');
    const g = await gateOf(sources({ onPrem: (hosts) => (seen.push(hosts), { routers: [ROUTER], offPremCalls: counter.counts() }) }));
    expect(seen).toEqual([['l20']]); // the chosen hosts only
    expect(g).toMatchObject({ label: 'Upstreams on-prem only', kind: 'auto', status: 'pass' });
    expect(g!.evidence).toBe(
      "1 service(s) reached only through the console's SSH tunnels on 127.0.0.1; lifecycle router URL(s) on loopback: l20/vllm http://127.0.0.1:9000; " +
        'off-prem calls refused since the console started: proxy 0, lifecycle 0, probe 0',
    );
  });

  it('fails when any call was refused for pointing off this machine, with the counts', async () => {
    const counter = createOffPremCounter();
    counter.check('http://10.0.0.1:8000/v1/chat/completions', 'proxy');
    counter.check('http://10.0.0.1:8000/v1/chat/completions', 'proxy');
    counter.check('https://router.example.com/admin', 'lifecycle');
    const g = await gateOf(sources({ onPrem: () => ({ routers: [], offPremCalls: counter.counts() }) }));
    expect(g?.status).toBe('fail');
    expect(g?.evidence).toContain('no lifecycle router URL configured');
    expect(g?.evidence).toContain('off-prem calls refused since the console started: proxy 2, lifecycle 1, probe 0');
  });

  it('fails on a router URL off loopback, naming it without its user info or path', async () => {
    const routers = [ROUTER, { target: 'l20/llama', url: 'http://admin:hunter2@10.0.0.7:9000/admin?key=x' }];
    const g = await gateOf(sources({ onPrem: () => ({ routers, offPremCalls: { proxy: 0, lifecycle: 0, probe: 0 } }) }));
    expect(g?.status).toBe('fail');
    expect(g?.evidence).toContain('lifecycle router URL(s) not on loopback: l20/llama http://10.0.0.7:9000');
    expect(g?.evidence).not.toMatch(/hunter2|admin:|key=x/);
  });

  it('is unverified when nothing counts refusals, and when the console gives no facts at all', async () => {
    const uncounted = await gateOf(sources({ onPrem: () => ({ routers: [ROUTER], offPremCalls: null }) }));
    expect(uncounted).toMatchObject({ status: 'unverified', evidence: expect.stringContaining('off-prem calls are not counted in this console') });
    expect((await gateOf(sources()))?.status).toBe('unverified');
    // A router off loopback fails even without the counter: that much is known.
    const bad = await gateOf(sources({ onPrem: () => ({ routers: [{ target: 'l20/vllm', url: 'http://10.0.0.7:9000' }], offPremCalls: null }) }));
    expect(bad?.status).toBe('fail');
  });

  it('is stated in the Markdown and HTML reports with the counts', async () => {
    const counter = createOffPremCounter();
    counter.check('http://10.0.0.1/', 'probe');
    const e = await buildEvidence(req(), sources({ onPrem: () => ({ routers: [ROUTER], offPremCalls: counter.counts() }) }));
    const md = renderMarkdown(e, { evidenceSha256: 'a'.repeat(64) });
    const row = md.split('\n').find((l) => l.includes('`auto.upstreams.on-prem`'));
    expect(row).toContain('Upstreams on-prem only');
    expect(row).toContain('FAIL');
    expect(row).toContain('proxy 0, lifecycle 0, probe 1');
    const html = renderHtml(e, { evidenceSha256: 'a'.repeat(64) });
    const at = html.indexOf('auto.upstreams.on-prem');
    expect(at).toBeGreaterThan(0);
    const tr = html.slice(html.lastIndexOf('<tr', at), html.indexOf('</tr>', at));
    expect(tr).toContain('Upstreams on-prem only');
    expect(tr).toContain('proxy 0, lifecycle 0, probe 1');
  });
});
