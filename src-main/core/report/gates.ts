// The gate table: automatic gates computed from the evidence, and the manual
// gates of a proof-of-concept runbook that only a person can judge. An
// automatic gate that cannot be measured is *unverified*, never pass; a manual
// gate nobody has marked is *pending*.
import type { Check, Evidence, Gate, GateStatus, Verdict } from '../../../src-preload/contract/index.js';
import { OFF_PREM_PURPOSES, describeUrlTarget, isOnPremUrl, type OffPremCounts } from '../base/index.js';
import { chainHow } from './audit-text.js';
import type { GateMark } from './repository.js';
import { upstreamKey } from '../upstream/index.js';
import { diskMarginGate } from './disk-margin-gate.js';

/** What the on-prem gate needs beyond the evidence (field notes §3: upstreams only through the tunnels or loopback). */
export interface OnPremFacts {
  /** lifecycle.routerBaseUrl of each chosen service that has one, as configured (`label/serviceId`). */
  routers: readonly { target: string; url: string }[];
  /** Calls refused since the console started because their URL was off this machine; null when nothing counts them. */
  offPremCalls: Readonly<Partial<OffPremCounts>> | null;
}

export interface ManualGateDefinition {
  id: string;
  label: string;
  /** What evidence the operator should attach in the note. */
  hint: string;
}

export const MANUAL_GATES: readonly ManualGateDefinition[] = [
  { id: 'order.matches', label: 'Instance matches the order', hint: 'GPU model and count, vCPU, RAM, region, image as ordered' },
  { id: 'ssh.key-sudo', label: 'SSH key login and sudo work', hint: 'who logged in with which key; sudo tested' },
  { id: 'gpu.container', label: 'GPU visible inside the container', hint: 'nvidia-smi inside the serving container' },
  { id: 'image.pinned', label: 'Pinned image pulled', hint: 'image digest and model revision' },
  { id: 'api.features', label: 'OpenAI API, JSON, stream and tool call work', hint: 'which client calls were tried' },
  { id: 'workload.business', label: 'Business-shaped workload passes', hint: 'prompt set, output limits, result' },
  { id: 'isolation.smoke', label: 'Isolation smoke test', hint: 'what was tried from outside and refused' },
  { id: 'budget.stop-drill', label: 'Budget alerts and stop drill', hint: 'alert received, stop and start rehearsed' },
];

export function isManualGate(id: string): boolean {
  return MANUAL_GATES.some((g) => g.id === id);
}

export function manualGates(marks: ReadonlyMap<string, GateMark>): Gate[] {
  return MANUAL_GATES.map((def) => {
    const m = marks.get(def.id);
    return {
      id: def.id,
      label: def.label,
      kind: 'manual' as const,
      status: m?.status ?? 'pending',
      evidence: m ? (m.note.trim() ? m.note : '(no note)') : `not marked yet — ${def.hint}`,
      note: m?.note ?? null,
      markedBy: m?.markedBy ?? null,
      markedAt: m?.markedAt ?? null,
    };
  });
}

function gate(id: string, label: string, status: Verdict, evidence: string): Gate {
  return { id, label, kind: 'auto', status: status as GateStatus, evidence, note: null, markedBy: null, markedAt: null };
}

/** Combines checks of one kind across hosts: any fail → fail; else any unverified → unverified; else pass (none at all → unverified). */
export function combineChecks(checks: readonly { host: string; check: Check }[], none: string): { status: Verdict; evidence: string } {
  if (checks.length === 0) return { status: 'unverified', evidence: none };
  const failed = checks.filter((c) => c.check.verdict === 'fail');
  const unverified = checks.filter((c) => c.check.verdict === 'unverified');
  const pick = failed.length ? failed : unverified.length ? unverified : checks;
  const status: Verdict = failed.length ? 'fail' : unverified.length ? 'unverified' : 'pass';
  const lines = pick.slice(0, 6).map((c) => `${c.host}: ${c.check.evidence}`);
  if (pick.length > 6) lines.push(`… and ${pick.length - 6} more`);
  return { status, evidence: lines.join('; ') };
}

function checksMatching(e: Evidence, re: RegExp): { host: string; check: Check }[] {
  const out: { host: string; check: Check }[] = [];
  for (const h of e.security ?? []) for (const c of h.checks) if (re.test(c.id)) out.push({ host: h.host, check: c });
  return out;
}

/**
 * Upstreams on-prem only: every service is reached through the console's SSH tunnel
 * (127.0.0.1, by construction), every lifecycle router URL is loopback, and nothing
 * was refused for pointing off this machine. Without the counter it is unverified.
 */
export function onPremGate(services: number | null, facts: OnPremFacts | undefined): Gate {
  const id = 'auto.upstreams.on-prem';
  const label = 'Upstreams on-prem only';
  if (!facts) return gate(id, label, 'unverified', 'the console gave no on-prem facts (router URLs, off-prem counter)');
  const parts: string[] = [];
  if (services !== null) parts.push(`${services} service(s) reached only through the console's SSH tunnels on 127.0.0.1`);
  const offRouters = facts.routers.filter((r) => !isOnPremUrl(r.url));
  const router = (r: { target: string; url: string }) => `${r.target} ${describeUrlTarget(r.url)}`;
  parts.push(
    facts.routers.length === 0
      ? 'no lifecycle router URL configured'
      : offRouters.length
        ? `lifecycle router URL(s) not on loopback: ${offRouters.map(router).join(', ')}`
        : `lifecycle router URL(s) on loopback: ${facts.routers.map(router).join(', ')}`,
  );
  const counts = facts.offPremCalls;
  const refused = counts === null ? null : OFF_PREM_PURPOSES.reduce((n, p) => n + (counts[p] ?? 0), 0);
  parts.push(
    counts === null
      ? 'off-prem calls are not counted in this console'
      : `off-prem calls refused since the console started: ${OFF_PREM_PURPOSES.map((p) => `${p} ${counts[p] ?? 0}`).join(', ')}`,
  );
  const status: Verdict = offRouters.length || (refused ?? 0) > 0 ? 'fail' : refused === null ? 'unverified' : 'pass';
  return gate(id, label, status, parts.join('; '));
}

/** The automatic gates, from an evidence object whose other sections are already filled. */
type GateInput = Omit<Evidence, 'gates'> & { gates?: unknown };

export function autoGates(e: GateInput, onPrem?: OnPremFacts): Gate[] {
  const ev = e as Evidence;
  const gates: Gate[] = [];
  const noSecurity = e.security === null ? 'the security section was not included' : 'no host was checked';

  const sec = (id: string, label: string, re: RegExp) => {
    const r = combineChecks(checksMatching(ev, re), noSecurity);
    gates.push(gate(id, label, r.status, r.evidence));
  };
  sec('auto.ssh.hardened', 'Root and password SSH login disabled', /^sshd\./);
  sec('auto.ssh.host-key', 'SSH host key verified', /^ssh\.host-key$/);
  sec('auto.gpu.visible', 'GPU visible on the host', /^gpu\.visible$/);
  sec('auto.port.loopback', 'Model port bound to loopback only', /^port\.loopback\./);
  gates.push(onPremGate(e.inventory?.reduce((n, h) => n + h.services.length, 0) ?? null, onPrem));
  sec('auto.api.health', 'Model server answers /health', /^api\.health\./);
  sec('auto.api.auth', 'API refuses calls without the service key', /^api\.auth\./);

  gates.push(diskMarginGate(e.hostState));
  gates.push(...modelServingGates(e));
  gates.push(...benchGates(e));
  gates.push(...costGates(e));
  gates.push(...lifecycleGates(e));
  gates.push(...alertGates(e));
  gates.push(
    gate(
      'auto.audit.chain',
      'Audit chain intact',
      e.audit.chainVerified ? 'pass' : 'fail',
      e.audit.chainVerified
        ? `rows 1–${e.audit.headSeq ?? 0} verify${chainHow(e.audit)}; head ${e.audit.headHash?.slice(0, 16) ?? '—'}…`
        : `the chain does not verify: ${e.audit.chainProblem ?? 'unknown problem'}`,
    ),
  );
  return gates;
}

/** Model starts: every configured model listed by its server. */
function modelServingGates(e: GateInput): Gate[] {
  const gates: Gate[] = [];
  if (e.inventory === null) {
    gates.push(gate('auto.model.serving', 'Configured models are served', 'unverified', 'the inventory section was not included'));
  } else {
    const missing: string[] = [];
    const unknown: string[] = [];
    const ok: string[] = [];
    for (const h of e.inventory) {
      for (const s of h.services) {
        if (h.liveError !== null || s.servedModels.length === 0) unknown.push(upstreamKey(h.label, s.id));
        else if (s.servedModels.some((m) => m.id.toLowerCase() === s.model.toLowerCase() || s.aliases.some((a) => a.toLowerCase() === m.id.toLowerCase()))) ok.push(`${h.label}/${s.id} serves ${s.model}`);
        else missing.push(`${h.label}/${s.id} does not list ${s.model} (lists ${s.servedModels.map((m) => m.id).join(', ')})`);
      }
    }
    const status: Verdict = missing.length ? 'fail' : unknown.length || ok.length === 0 ? 'unverified' : 'pass';
    const text = missing.length ? missing.join('; ') : unknown.length ? `no model list from ${unknown.join(', ')}` : ok.length ? ok.join('; ') : 'no services configured';
    gates.push(gate('auto.model.serving', 'Configured models are served', status, text));
  }
  return gates;
}

/** Benchmarks: measured figures, and a stability loop without failures. */
function benchGates(e: GateInput): Gate[] {
  const gates: Gate[] = [];
  if (e.benchmarks === null) {
    gates.push(gate('auto.bench.figures', 'TTFT, latency and tok/s measured', 'unverified', 'the benchmarks section was not included'));
    gates.push(gate('auto.bench.stability', 'Concurrency and stability', 'unverified', 'the benchmarks section was not included'));
  } else {
    const measured = e.benchmarks.filter((r) => r.levels.some((l) => !l.partial && l.outputTokPerS !== null && l.ttftP50Ms !== null));
    gates.push(
      gate(
        'auto.bench.figures',
        'TTFT, latency and tok/s measured',
        measured.length ? 'pass' : 'unverified',
        measured.length
          ? measured.map((r) => `${r.name}: ${r.levels.filter((l) => !l.partial).length} complete level(s)`).join('; ')
          : 'no completed benchmark run in the window',
      ),
    );
    const stab = e.benchmarks.flatMap((r) => r.levels.filter((l) => l.phase === 'stability').map((l) => ({ run: r, l })));
    const bad = stab.filter((x) => x.l.failed > 0 || x.l.partial);
    gates.push(
      gate(
        'auto.bench.stability',
        'Concurrency and stability',
        stab.length === 0 ? 'unverified' : bad.length ? 'fail' : 'pass',
        stab.length === 0
          ? 'no stability loop in the window'
          : (bad.length ? bad : stab).map((x) => `${x.run.name}: c=${x.l.level}, ${x.l.completed}/${x.l.requests} completed, ${x.l.failed} failed${x.l.partial ? ', cut short' : ''}`).join('; '),
      ),
    );
  }
  return gates;
}

/** Cost baseline: a price and a usage-based cost per token for every host. */
function costGates(e: GateInput): Gate[] {
  const gates: Gate[] = [];
  if (e.cost === null) {
    gates.push(gate('auto.cost.baseline', 'Cost baseline', 'unverified', 'the cost section was not included'));
  } else {
    const missing = e.cost.filter((c) => c.perMillionOutputUsageBased.value === null);
    gates.push(
      gate(
        'auto.cost.baseline',
        'Cost baseline',
        e.cost.length === 0 || missing.length ? 'unverified' : 'pass',
        e.cost.length === 0
          ? 'no host'
          : missing.length
            ? missing.map((c) => `${c.host}: ${c.perMillionOutputUsageBased.unavailableReason ?? 'unavailable'}`).join('; ')
            : e.cost.map((c) => `${c.host}: ${c.perMillionOutputUsageBased.value!.toFixed(2)} USD per 1M output tokens (estimate)`).join('; '),
      ),
    );
  }
  return gates;
}

/** Lifecycle: every change in the window verified afterwards. */
function lifecycleGates(e: GateInput): Gate[] {
  const gates: Gate[] = [];
  if (e.lifecycle === null) {
    gates.push(gate('auto.lifecycle.verified', 'Lifecycle changes approved and verified', 'unverified', 'the lifecycle section was not included'));
  } else {
    const l = e.lifecycle;
    // An interrupted action's outcome is unknown: it fails the gate as a failed one does, named as what it is.
    const failed = l.actions.filter((a) => a.state === 'failed' || a.state === 'interrupted');
    gates.push(
      gate(
        'auto.lifecycle.verified',
        'Lifecycle changes approved and verified',
        failed.length ? 'fail' : l.verified > 0 ? 'pass' : 'unverified',
        failed.length
          ? failed.map((a) => `${a.kind} ${a.upstream} ${a.state}: ${a.error ?? 'see observed'}`).join('; ')
          : l.verified > 0
            ? `${l.verified} change(s) approved by a person and verified afterwards`
            : 'no lifecycle change in the window',
      ),
    );
  }
  return gates;
}

/** Alerts: no critical alert raised in the window and still open at its end. */
function alertGates(e: GateInput): Gate[] {
  const gates: Gate[] = [];
  if (e.alerts === null) {
    gates.push(gate('auto.alerts.critical', 'No critical alert left open', 'unverified', 'the alerts section was not included'));
  } else {
    const open = new Map<string, { at: number; message: string }>();
    for (const a of [...e.alerts].sort((x, y) => x.seq - y.seq)) {
      const key = `${a.kind}:${a.target ?? ''}`;
      if (a.event === 'cleared' || a.severity !== 'critical') open.delete(key);
      else open.set(key, { at: a.at, message: a.message });
    }
    gates.push(
      gate(
        'auto.alerts.critical',
        'No critical alert left open',
        open.size ? 'fail' : 'pass',
        open.size ? [...open.entries()].map(([k, v]) => `${k}: ${v.message}`).join('; ') : `${e.alerts.length} alert event(s) in the window, none critical and still open`,
      ),
    );
  }
  return gates;
}

export function gateCounts(gates: readonly Gate[] | null): { pass: number; fail: number; pending: number; unverified: number } {
  const c = { pass: 0, fail: 0, pending: 0, unverified: 0 };
  for (const g of gates ?? []) c[g.status] += 1;
  return c;
}
