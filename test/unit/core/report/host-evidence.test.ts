import { describe, expect, it } from 'vitest';
import {
  EvidenceSchema,
  ReportRequestSchema,
  type ActionView,
  type DiskView,
  type EvidenceHostState,
  type HostHealthView,
  type LogLine,
} from '../../../../src-preload/contract/index.js';
import { buildEvidence, type ReportSources } from '../../../../src-main/core/report/builder.js';
import type { ServiceLogReader } from '../../../../src-main/core/report/log-excerpts.js';
import { renderHtml } from '../../../../src-main/core/report/render-html.js';
import { renderMarkdown } from '../../../../src-main/core/report/render-markdown.js';
import { sampleEvidence } from '../../../fixtures/report/evidence-sample.js';

// Issue #29 item 7: the report carries each host's health at export (with its
// reading time), an automatic disk-margin gate against the configured
// threshold, and log lines around lifecycle actions only when asked for.

const T0 = Date.UTC(2026, 11, 1, 8, 0, 0);
const HOUR = 3_600_000;
const GIB = 1024 ** 3;
const READ_AT = T0 + HOUR - 7_000;

const disk = (kind: DiskView['kind'], path: string, freeGiB: number | null, totalGiB = 96.8, mount = '/'): DiskView => ({
  kind,
  path,
  mount,
  totalBytes: totalGiB * GIB,
  usedBytes: freeGiB === null ? null : (totalGiB - freeGiB) * GIB,
  freeBytes: freeGiB === null ? null : freeGiB * GIB,
  error: null,
});

function health(disks: DiskView[], over: Partial<HostHealthView> = {}): HostHealthView {
  return {
    atMs: READ_AT,
    staleReason: null,
    source: 'df -PB1, /proc',
    intervalMs: 15_000,
    bootId: 'b1',
    uptimeS: 3600,
    rebootedAtMs: null,
    load1: 0.5,
    load5: 0.4,
    load15: 0.3,
    cpuCount: 8,
    memTotalBytes: 64 * GIB,
    memAvailableBytes: 40 * GIB,
    swapTotalBytes: null,
    swapFreeBytes: null,
    disks,
    cacheSizes: [],
    cacheSizesAtMs: null,
    docker: null,
    issues: [],
    ...over,
  };
}

const hostState = (host: string, h: HostHealthView | null): EvidenceHostState => ({
  host,
  connection: 'connected',
  health: h,
  gpus: [{ index: 0, name: 'NVIDIA L20', processes: [{ pid: 4812, name: 'llama-server', user: 'ops', usedMemoryMiB: 9318, serviceId: null, why: 'no configured service listens on its ports' }], faults: null }],
  gpuProcesses: {
    atMs: READ_AT,
    matchedAtMs: READ_AT,
    flags: [{ code: 'FLEET_GPU_PROCESS_UNKNOWN', message: 'PID 4812 llama-server holds 9.1 GiB on GPU0 — not a configured service', pid: 4812, serviceId: null, gpuIndex: 0, command: 'kill 4812' }],
  },
});

function action(over: Partial<ActionView> = {}): ActionView {
  return {
    id: 'a1',
    kind: 'restart',
    upstream: 'l20/vllm',
    label: 'l20',
    serviceId: 'vllm',
    model: 'Qwen3.6-27B-FP8',
    driver: 'ssh-command',
    state: 'failed',
    proposer: 'operator:alice@web',
    reason: 'stuck',
    repeats: 1,
    nonce: null,
    requiresTypedLabel: true,
    expectedEffect: 'restarts',
    expectedDowntimeMs: 120_000,
    downtimeBasis: 'estimate',
    steps: [],
    inFlight: 0,
    queued: 0,
    createdAt: T0 + 10 * 60_000,
    expiresAt: T0 + 20 * 60_000,
    decidedAt: T0 + 11 * 60_000,
    decision: 'approved',
    approver: { osUser: 'alice', displayName: 'Alice Ops', via: 'web' },
    standingApprovalId: null,
    rejectedBy: null,
    rejectReason: null,
    withdrawnBy: null,
    withdrawReason: null,
    startedAt: T0 + 11 * 60_000,
    finishedAt: T0 + 13 * 60_000,
    progress: null,
    drained: null,
    aborted: null,
    observed: [],
    error: 'health did not come back',
    ...over,
  };
}

const line = (ts: number | null, text: string): LogLine => ({ type: 'line', ts, text, stream: 'stdout', failure: /out of memory/i.test(text) ? 'cuda-oom' : null, cutBytes: 0, binary: false });

/** The service's log: lines before, during and after the restart's window, one secret-looking line already masked by the logs capability. */
const LOG: LogLine[] = [
  line(T0 + 10 * 60_000, 'BEFORE-WINDOW line'),
  line(T0 + 11 * 60_000 - 10_000, 'INFO Stopping vLLM API server'),
  line(T0 + 12 * 60_000, 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB'),
  line(null, '  continuation of the traceback'),
  line(T0 + 12 * 60_000 + 1_000, 'HF_TOKEN=[masked]'),
  line(T0 + 12 * 60_000 + 2_000, `LONG ${'x'.repeat(1500)}`),
  line(T0 + 15 * 60_000, 'AFTER-WINDOW line'),
];

function sources(states: Record<string, HostHealthView | null>, over: Partial<ReportSources> = {}): ReportSources & { logReads: number } {
  const counter = { logReads: 0 };
  const serviceLogs: ServiceLogReader = async (host, serviceId, sinceMs) => {
    counter.logReads += 1;
    if (serviceId === 'file-svc') return { source: { kind: 'file', description: 'file /var/log/x.log', timestamps: false }, lines: [], truncated: false, problem: 'LOGS_SINCE_UNSUPPORTED: "since" cannot be asked here' };
    return { source: { kind: 'compose', description: 'docker compose logs of vllm', timestamps: true }, lines: LOG.filter((l) => l.ts === null || l.ts >= sinceMs), truncated: false, problem: null };
  };
  const base: ReportSources = {
    now: () => T0 + HOUR,
    actor: 'operator:alice@test',
    console: { version: '0.1.0', mode: 'web', demo: true },
    hosts: () => Object.keys(states).map((label) => ({ label, pricePerHourUsd: null })),
    liveChecks: () => Promise.reject(new Error('not used')),
    offlineInventory: (label) => ({ label, address: `ops@${label}:22`, jumpHost: null, connection: 'connected', liveError: null, hostKeyFingerprint: null, pricePerHourUsd: null, gpus: [], services: [] }),
    auditEvents: () => [],
    auditCoverage: () => ({ fromSeq: null, toSeq: null, headSeq: null, headHash: null, chainVerified: true, chainProblem: null }),
    benchRuns: () => [],
    trafficEvaluation: () => ({ source: 'proxy', fromMs: T0, toMs: T0 + HOUR, figures: [] }),
    actions: () => [action()],
    series: () => null,
    hostCost: () => {
      throw new Error('not used');
    },
    gateMarks: () => new Map(),
    hostState: (label) => hostState(label, states[label] ?? null),
    serviceLogs,
  };
  return Object.assign(counter, base, over);
}

const req = (over: Record<string, unknown> = {}) => ReportRequestSchema.parse({ fromMs: T0, toMs: T0 + HOUR, live: false, sections: ['health', 'lifecycle', 'gates'], ...over });
const gateOf = (e: { gates: { id: string; status: string; evidence: string }[] | null }) => e.gates!.find((g) => g.id === 'auto.disk.margin')!;

describe('host health in the evidence', () => {
  it("carries each host's health, processes and flags as read, with the reading time, and renders them in Markdown and HTML", async () => {
    const e = await buildEvidence(req(), sources({ l20: health([disk('root', '/', 8), disk('cache', '/home/ops/.cache/huggingface', 8)]) }));
    expect(EvidenceSchema.parse(e)).toEqual(e);
    expect(e.schema).toBe('gpu-console.evidence/4');
    expect(e.hostState![0]).toMatchObject({ host: 'l20', health: { atMs: READ_AT }, gpuProcesses: { atMs: READ_AT } });
    const md = renderMarkdown(e, { evidenceSha256: 'x'.repeat(64) });
    const section = md.slice(md.indexOf('## Host health at export'));
    expect(section).toContain(new Date(READ_AT).toISOString().replace(/\.000Z$/, 'Z'));
    expect(section).toMatch(/\| root \| \/ \| \/ \| 8\.0 GiB \| 96\.8 GiB \| 8\.3 % \| \*\*LOW\*\* \|/);
    expect(section).toContain('PID 4812 llama-server holds 9.1 GiB on GPU0 — not a configured service');
    expect(section).toContain('`kill 4812`');
    expect(section).toContain('| Swap | — |');
    const html = renderHtml(e, { evidenceSha256: 'x'.repeat(64) });
    expect(html).toContain('<section id="hoststate"');
    expect(html).toContain('<code>kill 4812</code>');
  });

  it('the disk-margin gate: 8 GiB free fails (naming field notes §1), a healthy disk passes, polling off / stale / unread are unverified', async () => {
    const fail = gateOf(await buildEvidence(req(), sources({ l20: health([disk('root', '/', 8)]) })));
    expect(fail.status).toBe('fail');
    expect(fail.evidence).toContain('l20: / 8.0 GiB free of 96.8 GiB (8.3 %) — LOW');
    expect(fail.evidence).toContain('8.0 GiB free after image, model and compile cache');
    expect(fail.evidence).toContain('free below 10 GiB or 10 % free is low');

    // The percent bound alone: 40 GiB free of 1 TiB is 3.9 %.
    expect(gateOf(await buildEvidence(req(), sources({ big: health([disk('root', '/', 40, 1024)]) }))).status).toBe('fail');
    // A cache on its own filesystem is judged too.
    expect(gateOf(await buildEvidence(req(), sources({ l20: health([disk('root', '/', 50), disk('cache', '/models', 2, 100, '/models')]) }))).evidence).toContain('/models 2.0 GiB free of 100.0 GiB (2.0 %) — LOW');

    const pass = gateOf(await buildEvidence(req(), sources({ l20: health([disk('root', '/', 50), disk('cache', '/home/ops/.cache/huggingface', 50)]) })));
    expect(pass.status).toBe('pass');
    expect(pass.evidence).toContain('l20: / 50.0 GiB free of 96.8 GiB (51.7 %)');

    const off = gateOf(await buildEvidence(req(), sources({ l20: health([disk('root', '/', 50)]), lab: null })));
    expect(off).toMatchObject({ status: 'unverified' });
    expect(off.evidence).toContain('lab: host health is not read (polling off for this host)');
    const stale = gateOf(await buildEvidence(req(), sources({ l20: health([disk('root', '/', 50)], { staleReason: 'SSH_NOT_CONNECTED: link down' }) })));
    expect(stale).toMatchObject({ status: 'unverified', evidence: expect.stringContaining('is stale: SSH_NOT_CONNECTED: link down') });
    const unknown = gateOf(await buildEvidence(req(), sources({ l20: health([disk('root', '/', null)]) })));
    expect(unknown.status).toBe('unverified');
  });

  it("reads the host's own threshold from its health view: 8 GiB free passes where its alert is set to 5 GiB / 5 %; the view's own verdict stands", async () => {
    const g = gateOf(await buildEvidence(req(), sources({ l20: health([disk('root', '/', 8)], { diskThreshold: { freeGiB: 5, freePct: 5 } }) })));
    expect(g.status).toBe('pass');
    expect(g.evidence).toContain('free below 5 GiB or 5 % free is low');
    // The view judged it (core's one rule, config/disk-margin.ts): the report does not judge again.
    const judged = gateOf(await buildEvidence(req(), sources({ l20: health([{ ...disk('root', '/', 50), margin: 'low' }], { diskThreshold: { freeGiB: 60, freePct: 10 } }) })));
    expect(judged).toMatchObject({ status: 'fail', evidence: expect.stringContaining('free below 60 GiB or 10 % free is low') });
  });
});

describe('log lines around lifecycle actions', () => {
  it('without the option no log line text appears in the evidence or any rendering, and the log is not read', async () => {
    const src = sources({ l20: health([disk('root', '/', 50)]) });
    const e = await buildEvidence(req(), src);
    expect(e.logExcerpts).toBeNull();
    expect(src.logReads).toBe(0);
    const all = [JSON.stringify(e), renderMarkdown(e, { evidenceSha256: 'x'.repeat(64) }), renderHtml(e, { evidenceSha256: 'x'.repeat(64) })].join('\n');
    for (const l of LOG) expect(all).not.toContain(l.text);
  });

  it('with the option: the lines from 30 s before the start to 60 s after the end, masked as read, in every format', async () => {
    const e = await buildEvidence(req({ includeLogs: true }), sources({ l20: health([disk('root', '/', 50)]) }));
    const [x] = e.logExcerpts!;
    expect(x).toMatchObject({ actionId: 'a1', kind: 'restart', host: 'l20', serviceId: 'vllm', fromMs: T0 + 11 * 60_000 - 30_000, toMs: T0 + 14 * 60_000, problem: null, omitted: 0 });
    expect(x!.lines.map((l) => l.text)).toEqual([
      'INFO Stopping vLLM API server',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB',
      '  continuation of the traceback',
      'HF_TOKEN=[masked]',
      `LONG ${'x'.repeat(995)}`,
    ]);
    // A long line is cut in the report and the cut counted.
    expect(x!.lines[4]!.cutBytes).toBe(505);
    const md = renderMarkdown(e, { evidenceSha256: 'x'.repeat(64) });
    expect(md).toContain('## Log lines around lifecycle actions');
    expect(md).toContain('torch.OutOfMemoryError: CUDA out of memory');
    expect(md).toContain('**\\[cuda-oom\\]** `torch.OutOfMemoryError: CUDA out of memory');
    expect(md).not.toContain('BEFORE-WINDOW');
    expect(md).not.toContain('AFTER-WINDOW');
    expect(renderHtml(e, { evidenceSha256: 'x'.repeat(64) })).toContain('torch.OutOfMemoryError: CUDA out of memory');
  });

  it('a source that cannot start at a time says so instead of lines; actions that never ran are not read', async () => {
    const src = sources({ l20: health([disk('root', '/', 50)]) }, { actions: () => [action({ serviceId: 'file-svc' }), action({ id: 'a2', state: 'rejected', startedAt: null, finishedAt: null })] });
    const e = await buildEvidence(req({ includeLogs: true }), src);
    expect(src.logReads).toBe(1);
    expect(e.logExcerpts).toEqual([expect.objectContaining({ actionId: 'a1', serviceId: 'file-svc', lines: [], problem: expect.stringContaining('LOGS_SINCE_UNSUPPORTED') })]);
    expect(renderMarkdown(e, { evidenceSha256: 'x'.repeat(64) })).toContain('**No lines:** LOGS\\_SINCE\\_UNSUPPORTED');
  });
});

describe('the sample evidence', () => {
  it('renders faults and Xid events of a host that reports them', () => {
    const md = renderMarkdown(sampleEvidence(), { evidenceSha256: 'x'.repeat(64) });
    expect(md).toContain('Kernel log** read with journalctl: 1 Xid event(s).');
    expect(md).toContain('NVRM: Xid (PCI:0000:3b:00): 13');
    expect(md).toContain('Host health is not read for homelab-3090');
  });
});
