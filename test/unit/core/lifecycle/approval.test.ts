import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { LifecyclePolicies, LifecycleService, lifecycleTargets, looksLikeGibberish, type LifecycleTargetConfig } from '../../../../src-main/core/lifecycle/index.js';
import { issueNonce } from '../../../../src-main/core/lifecycle/approval.js';
import { ConfigSchema } from '../../../../src-main/core/config/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { invokeChannels, type FleetSnapshot } from '../../../../src-preload/contract/index.js';
import { urlClient } from '../../../helpers/upstream.js';
import { fleetStateOf } from '../../../helpers/fleet-state.js';

// Nothing changes a server without an approval: every path that is not
// approve-with-the-right-nonce is refused or only proposes; the fake fleet
// and proxy count every call that could change anything.

const T = (over: Partial<LifecycleTargetConfig> = {}): LifecycleTargetConfig => ({
  label: 'h1', serviceId: 'qwen', upstream: 'h1/qwen', kind: 'vllm', model: 'Q', remoteHost: '127.0.0.1', remotePort: 8000,
  driver: 'vllm-sleep', routerBaseUrl: null, restartCommand: 'docker restart {service}', sleepLevel: 1, ...over,
});

let clock: FakeClock;
let store: Store;
let targets: readonly LifecycleTargetConfig[];
let touched: string[];
let service: LifecycleService;
let sleepState: 'awake' | 'asleep-1' = 'awake';
const snapshot = (): FleetSnapshot => ({
  at: clock.now(),
  hosts: [{
    label: 'h1', address: 'a', state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, gpuModel: null, pricePerHourUsd: null,
    gpus: [], gpuStale: true, gpuStaleReason: 'x', updatedAt: null,
    services: [{ id: 'qwen', kind: 'vllm', model: 'Q', aliases: [], slots: 4, remotePort: 8000, tunnel: { state: 'up', localUrl: null, lastError: null }, health: 'ok', sleep: sleepState, requestsRunning: 0, requestsWaiting: 0, kvCachePct: 0, generationTokensPerS: 0, promptTokensPerS: 0, stale: false, staleReason: null }],
  }],
});

beforeEach(() => {
  clock = new FakeClock();
  store = openStore({ file: join(mkdtempSync(join(tmpdir(), 'gc-lc-unit-')), 'db.sqlite'), clock, logger: silentLogger });
  targets = [T()];
  touched = [];
  sleepState = 'awake';
  service = new LifecycleService({
    store, clock, logger: silentLogger, targets: () => targets,
    fleet: {
      state: () => fleetStateOf(snapshot()),
      upstream: () => { touched.push('http'); return urlClient('http://127.0.0.1:9'); },
      exec: (_l, c) => { touched.push(`exec ${c}`); return Promise.resolve({ exitCode: 0, signal: null, stdout: '', stderr: '', truncated: false }); },
    },
    proxy: { drain: () => { touched.push('drain'); return Promise.resolve({ drained: 0, aborted: 0 }); }, resume: () => void touched.push('resume'), load: () => ({ inFlight: 0, queued: 0 }) },
    onAction: () => undefined, onStanding: () => undefined, notify: () => undefined,
    options: { verifyDeadlineMs: () => 10 },
  });
});
afterEach(async () => {
  await service.dispose();
  store.close();
});

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { code: string }).code;
  }
  return 'no error';
};

describe('approval is the only way to change a server', () => {
  it('no contract channel runs a driver: the lifecycle channels are list / preview / propose / approve / reject / withdraw / standing / verifyNow (reads only)', () => {
    expect(Object.keys(invokeChannels).filter((c) => c.startsWith('actions.')).sort()).toEqual(
      ['actions.approve', 'actions.grantStanding', 'actions.list', 'actions.preview', 'actions.propose', 'actions.reject', 'actions.revokeStanding', 'actions.verifyNow', 'actions.withdraw'],
    );
    expect(invokeChannels['actions.approve'].input.safeParse({ id: 'act_abcdefgh' }).success).toBe(false); // nonce required
  });

  it('proposing touches nothing; wrong nonce, reused nonce and expired proposals are refused with codes', () => {
    const { action } = service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'test' });
    expect(touched).toEqual([]);
    expect(code(() => service.approve({ id: action.id, nonce: 'x'.repeat(24), caller: 'test' }))).toBe('LIFECYCLE_BAD_NONCE');
    expect(touched).toEqual([]);
    service.approve({ id: action.id, nonce: action.nonce!, caller: 'test' });
    // a concurrent second approval, with the same (now used) nonce or another
    expect(code(() => service.approve({ id: action.id, nonce: action.nonce!, caller: 'test' }))).toBe('LIFECYCLE_NONCE_USED');
    expect(code(() => service.reject({ id: action.id, nonce: 'y'.repeat(24), reason: 'r', caller: 'test' }))).toBe('LIFECYCLE_ALREADY_DECIDED');

    sleepState = 'asleep-1';
    const other = service.propose({ upstream: 'h1/qwen', kind: 'wake', proposer: 'test' }).action;
    clock.advance(16 * 60_000);
    expect(code(() => service.approve({ id: other.id, nonce: other.nonce!, caller: 'test' }))).toBe('LIFECYCLE_NONCE_USED');
    expect(service.get(other.id).state).toBe('expired');
    expect(store.audit.list({ limit: 50 }).some((e) => e.type === 'lifecycle.expired' && e.payload.actionId === other.id)).toBe(true);
  });

  it('one at a time per service; duplicates collapse', async () => {
    const a = service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'p1' });
    const b = service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'p2' });
    expect(b.collapsed).toBe(true);
    expect(b.action.id).toBe(a.action.id);
    expect(b.action.repeats).toBe(1);
    const r = service.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'p1' }).action;
    service.approve({ id: a.action.id, nonce: a.action.nonce!, caller: 'test' });
    expect(code(() => service.approve({ id: r.id, nonce: r.nonce!, typedLabel: 'h1', caller: 'test' }))).toBe('LIFECYCLE_BUSY');
    await service.settled(a.action.id);
  });

  it('restart and offload need the host label typed', () => {
    const r = service.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'p' }).action;
    expect(r.requiresTypedLabel).toBe(true);
    expect(r.steps.find((s) => s.kind === 'ssh')!.text).toBe('docker restart qwen');
    expect(code(() => service.approve({ id: r.id, nonce: r.nonce!, caller: 'test' }))).toBe('LIFECYCLE_LABEL_MISMATCH');
    expect(code(() => service.approve({ id: r.id, nonce: r.nonce!, typedLabel: 'H1', caller: 'test' }))).toBe('LIFECYCLE_LABEL_MISMATCH');
    expect(touched).toEqual([]);
  });

  it('bad input: unknown service, unsupported action, template with missing parameters, target gone', () => {
    expect(code(() => service.propose({ upstream: 'h1/nope', kind: 'sleep', proposer: 'p' }))).toBe('LIFECYCLE_UNKNOWN_SERVICE');
    targets = [T({ driver: 'llama-server', kind: 'llama-server' })];
    expect(code(() => service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'p' }))).toBe('LIFECYCLE_UNSUPPORTED_ACTION');
    targets = [T({ restartCommand: 'systemctl restart {unit}' })];
    expect(code(() => service.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'p' }))).toBe('LIFECYCLE_TEMPLATE_INVALID');
    targets = [T({ restartCommand: null })];
    expect(code(() => service.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'p' }))).toBe('LIFECYCLE_UNSUPPORTED_ACTION');
    targets = [T()];
    const s = service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'p' }).action;
    targets = [];
    expect(code(() => service.approve({ id: s.id, nonce: s.nonce!, caller: 'test' }))).toBe('LIFECYCLE_TARGET_GONE');
    expect(code(() => service.approve({ id: s.id, nonce: s.nonce!, caller: 'test' }))).toBe('LIFECYCLE_NONCE_USED');
    expect(touched).toEqual([]);
  });

  it('a policy firing only proposes; a standing approval approves its one kind, audited as such, until revoked', async () => {
    const config = ConfigSchema.parse({
      hosts: [{ label: 'h1', ssh: { host: 'x', user: 'u', agent: true }, services: [{ id: 'qwen', kind: 'vllm', remotePort: 8000, model: 'Q', lifecycle: { idleSleepMinutes: 1 } }] }],
    });
    expect(lifecycleTargets(config)[0]).toMatchObject({ driver: 'vllm-sleep', sleepLevel: 1 });
    const policies = new LifecyclePolicies({ service, clock, logger: silentLogger, config: () => config, load: () => ({ inFlight: 0, queued: 0 }) });
    policies.observe(fleetStateOf(snapshot()));
    clock.advance(61_000);
    policies.observe(fleetStateOf(snapshot()));
    policies.observe(fleetStateOf(snapshot()));
    const proposed = service.list(10).actions;
    expect(proposed).toHaveLength(1);
    expect(proposed[0]).toMatchObject({ kind: 'sleep', state: 'proposed', proposer: 'policy:idle-sleep' });
    expect(touched).toEqual([]);

    sleepState = 'asleep-1';
    const sa = service.grantStanding({ upstream: 'h1/qwen', kind: 'wake', durationMinutes: 60, caller: 'test' });
    policies.sleepingRequest('h1/qwen');
    const wake = service.list(10).actions.find((a) => a.kind === 'wake')!;
    expect(wake).toMatchObject({ standingApprovalId: sa.id });
    expect(['approved', 'running', 'failed']).toContain(wake.state);
    await service.settled(wake.id);
    expect(store.audit.list({ limit: 100 }).some((e) => e.type === 'lifecycle.standing.used' && e.payload.actionId === wake.id)).toBe(true);
    service.revokeStanding(sa.id, 'test');
    policies.sleepingRequest('h1/qwen');
    expect(service.list(10).actions.find((a) => a.kind === 'wake' && a.state === 'proposed')).toBeTruthy();
    expect(code(() => service.grantStanding({ upstream: 'h1/qwen', kind: 'restart', durationMinutes: 60, caller: 'test' }))).toBe('LIFECYCLE_LABEL_MISMATCH');
  });

  it('every step of an action is a row in the verifying audit chain', async () => {
    const { action } = service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'p' });
    service.approve({ id: action.id, nonce: action.nonce!, caller: 'test' });
    await service.settled(action.id);
    const rows = store.audit.list({ limit: 100 }).filter((e) => e.payload.actionId === action.id).reverse();
    expect(rows.map((r) => r.type).slice(0, 4)).toEqual(['lifecycle.proposed', 'lifecycle.approved', 'lifecycle.running', 'lifecycle.drained']);
    expect(rows.at(-1)!.type).toBe('lifecycle.resumed');
    expect(rows.some((r) => r.type === 'lifecycle.failed')).toBe(true); // nothing answers on port 9: reported as failed
    expect(store.audit.verify().ok).toBe(true);
    store.db.exec('DROP TRIGGER IF EXISTS audit_events_no_update');
    const triggers = store.db.prepare("SELECT name FROM sqlite_master WHERE type='trigger' AND tbl_name='audit_events'").all() as { name: string }[];
    for (const t of triggers) store.db.exec(`DROP TRIGGER ${t.name}`);
    store.db.prepare('UPDATE audit_events SET payload = ? WHERE seq = ?').run(JSON.stringify({ ...rows[1]!.payload, approver: null }), rows[1]!.seq);
    const v = store.audit.verify();
    expect(v).toMatchObject({ ok: false, brokenAt: rows[1]!.seq });
  });
});

describe('proposals are drafts until confirmed', () => {
  const auditTypes = () => store.audit.list({ limit: 100 }).map((e) => e.type);

  it('a preview stores, audits and notifies nothing, and shows what a proposal would', () => {
    const before = auditTypes();
    const draft = service.preview({ upstream: 'h1/qwen', kind: 'restart' });
    expect(draft).toMatchObject({ kind: 'restart', upstream: 'h1/qwen', label: 'h1', requiresTypedLabel: true, existing: null, standing: null });
    expect(draft.steps.map((s) => s.kind)).toContain('drain');
    expect(service.list(10).actions).toEqual([]);
    expect(auditTypes()).toEqual(before);
    expect(touched).toEqual([]);
    // Once a proposal of that kind waits, the preview names it (the UI opens it instead of a second draft).
    const { action } = service.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'test' });
    expect(service.preview({ upstream: 'h1/qwen', kind: 'restart' }).existing).toEqual({ id: action.id, state: 'proposed' });
  });

  it('approve-now proposes and approves in one call; a wrong typed label creates nothing', async () => {
    expect(code(() => service.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'test' }, { typedLabel: 'h2', caller: 'test' }))).toBe('LIFECYCLE_LABEL_MISMATCH');
    expect(service.list(10).actions).toEqual([]);
    expect(auditTypes().filter((t) => t.startsWith('lifecycle.'))).toEqual([]);
    const { action } = service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'test' }, { displayName: 'Alice', caller: 'test' });
    expect(['approved', 'running']).toContain(action.state);
    expect(action.approver).toMatchObject({ displayName: 'Alice', via: 'test' });
    await service.settled(action.id);
    const types = auditTypes();
    expect(types).toContain('lifecycle.proposed');
    expect(types).toContain('lifecycle.approved');
  });

  it('a waiting proposal can be withdrawn with its nonce, audited as withdrawn; nothing runs and the nonce is spent', () => {
    const { action } = service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'test' });
    expect(code(() => service.withdraw({ id: action.id, nonce: 'y'.repeat(24), caller: 'test' }))).toBe('LIFECYCLE_BAD_NONCE');
    const done = service.withdraw({ id: action.id, nonce: action.nonce!, reason: 'pressed by mistake', caller: 'test' });
    expect(done).toMatchObject({ state: 'withdrawn', nonce: null, decision: 'withdrawn', withdrawReason: 'pressed by mistake', rejectReason: null, approver: null, rejectedBy: null });
    expect(done.withdrawnBy).toMatchObject({ via: 'test' });
    expect(done.decidedAt).not.toBeNull();
    expect(service.pendingCount()).toBe(0);
    expect(touched).toEqual([]);
    const row = store.audit.list({ limit: 100 }).find((e) => e.type === 'lifecycle.withdrawn');
    expect(row?.payload).toMatchObject({ actionId: action.id, reason: 'pressed by mistake' });
    expect(code(() => service.approve({ id: action.id, nonce: action.nonce!, caller: 'test' }))).not.toBe('no error');
    // The stored row has the new state (migration 9 widened the table's CHECK constraint).
    expect(store.db.prepare('SELECT state FROM actions WHERE id = ?').get(action.id)).toEqual({ state: 'withdrawn' });
  });
});

describe('a change that would do nothing', () => {
  it('is refused before it becomes a proposal: wake when awake, sleep when asleep, offload when offloaded', () => {
    sleepState = 'awake';
    expect(code(() => service.propose({ upstream: 'h1/qwen', kind: 'wake', proposer: 'cli' }))).toBe('LIFECYCLE_NOT_APPLICABLE');
    expect(code(() => service.preview({ upstream: 'h1/qwen', kind: 'wake' }))).toBe('LIFECYCLE_NOT_APPLICABLE');
    sleepState = 'asleep-1';
    expect(code(() => service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'cli' }))).toBe('LIFECYCLE_NOT_APPLICABLE');
    // Level 1 may still be offloaded to level 2, and a restart is always possible.
    expect(service.preview({ upstream: 'h1/qwen', kind: 'offload' }).kind).toBe('offload');
    expect(service.preview({ upstream: 'h1/qwen', kind: 'restart' }).kind).toBe('restart');
    // Nothing was stored or audited by the refusals.
    expect(service.list(50).actions).toEqual([]);
    expect(store.audit.list({ limit: 50 }).filter((e) => e.type === 'lifecycle.proposed')).toEqual([]);
  });
});

describe('gibberish probe', () => {
  it("the verify step names what the probe checks, not a result: a failed probe is never shown beside 'not gibberish'", () => {
    sleepState = 'asleep-1';
    const verify = service.preview({ upstream: 'h1/qwen', kind: 'wake' }).steps.find((s) => s.kind === 'verify')!;
    expect(verify.text).toContain('completion probe: 8 tokens after "The capital of France is", failed if they read as gibberish');
    expect(verify.text).not.toMatch(/not gibberish|sensibly/);
  });

  it('tells tokenizer debris from words', () => {
    expect(looksLikeGibberish(' Paris. The city')).toBe(false);
    expect(looksLikeGibberish('ĠĊ!!▁▁¿¿ꙮ')).toBe(true);
    expect(looksLikeGibberish('')).toBe(true);
  });
});

describe('proposal nonces', () => {
  it('never start with "-": the CLI takes them as `--nonce VALUE`, where a leading dash reads as an option (CI: "Option --nonce argument is ambiguous", one nonce in 64)', () => {
    const nonces = Array.from({ length: 3000 }, () => issueNonce());
    expect(nonces.filter((n) => n.startsWith('-'))).toEqual([]);
    expect(new Set(nonces).size).toBe(3000);
    expect(nonces.every((n) => /^[A-Za-z0-9_][A-Za-z0-9_-]{23}$/.test(n))).toBe(true);
  });
});
