import { z } from 'zod';
import { UpstreamKeySchema } from './proxy.js';

// Contract channels of the lifecycle capability, merged into the channel table in channels.ts.
// Wake / sleep / offload / restart of a model service pass through one action
// queue: proposed (button, CLI or policy) → approved with the proposal's nonce
// (destructive actions also need the host label typed) → running → verified |
// failed | interrupted (the console stopped mid-run: never resumed, a person
// decides). Nothing here changes a server except `actions.approve`.

export const ActionKindSchema = z.enum(['wake', 'sleep', 'offload', 'restart']);
export type ActionKind = z.infer<typeof ActionKindSchema>;

/**
 * `interrupted`: the console stopped (crash, kill, power) while the action was
 * approved or running; it is closed at the next start, never resumed, and says
 * which steps were done. Rows written before it existed say `failed`.
 */
export const ActionStateSchema = z.enum(['proposed', 'approved', 'rejected', 'withdrawn', 'expired', 'running', 'verified', 'failed', 'interrupted']);
export type ActionState = z.infer<typeof ActionStateSchema>;

/** `router`: a front-door router's admin API; `llama-router`: llama-server in router mode (`/models/load`, `/models/unload`). */
export const LifecycleDriverNameSchema = z.enum(['vllm-sleep', 'router', 'ssh-command', 'llama-server', 'llama-router']);
export type LifecycleDriverName = z.infer<typeof LifecycleDriverNameSchema>;

/** One thing the action will do, exactly as it will be sent: an HTTP call or an SSH command. */
export const PlannedStepSchema = z
  .object({
    kind: z.enum(['http', 'ssh', 'drain', 'verify']),
    /** The verbatim call: `POST http://127.0.0.1:8000/sleep?level=1`, or the shell command. */
    text: z.string(),
    /** JSON body sent with an HTTP step, verbatim. */
    body: z.string().nullable(),
  })
  .strict();
export type PlannedStep = z.infer<typeof PlannedStepSchema>;

/**
 * How far one planned step got while the action ran, saved before and after
 * each step: a step `started` but never ended when the console stopped was
 * sent (or about to be) and its outcome is unknown.
 */
export const StepProgressSchema = z.enum(['not-started', 'started', 'done', 'failed']);
export type StepProgress = z.infer<typeof StepProgressSchema>;

/** What a person saw when they asked for the service's real state after an interruption (Verify now). */
export const InterruptionCheckSchema = z
  .object({
    at: z.number(),
    /** Who asked: `operator:alice@web`. */
    by: z.string(),
    /** Every check of the action's kind held (the service looks as the action promised); false: not all did. */
    ok: z.boolean(),
    /** One line per check, failures marked with ✗ (the same checks as verification after a run). */
    observed: z.array(z.string()),
  })
  .strict();
export type InterruptionCheck = z.infer<typeof InterruptionCheckSchema>;

/** An action the console stopped in the middle of: where it was, and each planned step's fate. */
export const InterruptionSchema = z
  .object({
    /** When the next start found it open. */
    detectedAt: z.number(),
    /** The state it was left in (`approved`: nothing had started; `running`). */
    wasState: z.enum(['approved', 'running']),
    /** Its last progress line (`step 2/3: …`), null if none was written. */
    lastProgress: z.string().nullable(),
    /** One per planned step, in order: done, failed, `unknown` (started; the console stopped before it ended) or `not-run`. */
    steps: z.array(z.object({ kind: z.enum(['http', 'ssh', 'drain', 'verify']), text: z.string(), outcome: z.enum(['done', 'failed', 'unknown', 'not-run']) }).strict()),
    /** The last Verify now, null until someone asks. */
    check: InterruptionCheckSchema.nullable(),
  })
  .strict();
export type Interruption = z.infer<typeof InterruptionSchema>;

/** A person who decided on a proposal: their name as typed (default the OS user), the OS user and the transport. */
export const ApproverSchema = z.object({ osUser: z.string(), displayName: z.string(), via: z.string() }).strict();
export type Approver = z.infer<typeof ApproverSchema>;

/**
 * How a proposal was decided; null while it waits. `approved` covers every
 * action that went on to run (approved, running, verified, failed), by a
 * person or a standing approval; `expired` had no decision in time.
 */
export const DecisionKindSchema = z.enum(['approved', 'rejected', 'withdrawn', 'expired']);
export type DecisionKind = z.infer<typeof DecisionKindSchema>;

/**
 * What is running on a service, from both sides. The proxy counts only what
 * passes through it; clients that use the SSH tunnel directly
 * (http://127.0.0.1:<tunnel port>) show only in the engine's own figures
 * (vLLM num_requests_running / _waiting; llama-server busy slots,
 * requests_processing / _deferred), which include the proxy's requests.
 */
export const ActionLoadSchema = z
  .object({
    /** When these figures were put together (main's clock). */
    at: z.number(),
    /** Sent to the engine by the proxy / held in the proxy's queue; null when no proxy runs or it has no figures for this upstream. */
    proxyInFlight: z.number().int().nullable(),
    proxyQueued: z.number().int().nullable(),
    /** `fresh`: read within a few poll intervals; `stale`: the last good reading is older, the last one failed or the host is not connected; `unknown`: never read. A stale figure is not taken for 0. */
    engine: z.enum(['fresh', 'stale', 'unknown']),
    /** The engine's figures from the fleet's last reading (stale ones too: the last thing it said); null when unknown. */
    engineRunning: z.number().int().nullable(),
    engineWaiting: z.number().int().nullable(),
    /** When the engine's figures were read; null when unknown. */
    engineReadAt: z.number().nullable(),
    /** Why the engine's figure is stale or unknown; null when fresh. */
    engineNote: z.string().nullable(),
    /** Running at the engine but not sent by the proxy (direct tunnel clients): max(0, engineRunning − proxyInFlight); null unless the engine figure is fresh. */
    direct: z.number().int().nullable(),
    /** In flight in all: through the proxy plus direct; null when direct is unknown. */
    inFlight: z.number().int().nullable(),
    /** The sentence shown: "3 in flight (2 through the proxy, 1 from direct tunnel clients), 1 waiting at the engine". */
    summary: z.string(),
  })
  .strict();
export type ActionLoad = z.infer<typeof ActionLoadSchema>;

/** The drain's wait at the engine for direct tunnel clients, after the proxy's own requests finished (or were cut). */
export const DirectDrainSchema = z
  .object({
    /** `idle`: the engine reported nothing running or waiting; `deadline`: went ahead at the drain deadline; `unknown`: no usable engine figure (never read, reading fails, host away), not waited for; `cancelled`: the console stopped. */
    outcome: z.enum(['idle', 'deadline', 'unknown', 'cancelled']),
    /** Still running / waiting at the engine when the action went ahead (the last reading); null when unknown. */
    running: z.number().int().nullable(),
    waiting: z.number().int().nullable(),
    waitedMs: z.number(),
    /** One line for the journal and the history. */
    text: z.string(),
  })
  .strict();
export type DirectDrain = z.infer<typeof DirectDrainSchema>;

export const ActionViewSchema = z
  .object({
    id: z.string(),
    kind: ActionKindSchema,
    upstream: UpstreamKeySchema,
    label: z.string(),
    serviceId: z.string(),
    model: z.string(),
    driver: LifecycleDriverNameSchema,
    state: ActionStateSchema,
    /** `operator:alice@web`, `policy:idle-sleep`, `cli`. */
    proposer: z.string(),
    reason: z.string(),
    /** How many identical proposals collapsed into this one. */
    repeats: z.number().int(),
    /** Main-issued; approval must present it. Null once decided. */
    nonce: z.string().nullable(),
    /** Restart and offload need the host label typed by the approver. */
    requiresTypedLabel: z.boolean(),
    expectedEffect: z.string(),
    expectedDowntimeMs: z.number(),
    /** "level-1 wake took 2.9 s, 3.1 s, 3.4 s" or "no measurement yet (estimate)". */
    downtimeBasis: z.string(),
    steps: z.array(PlannedStepSchema),
    /** At proposal time: requests running / waiting on that upstream in the proxy. */
    inFlight: z.number().int(),
    queued: z.number().int(),
    /** Both sides' counts (proxy and engine, so direct tunnel clients too), refreshed while the proposal waits; absent on actions recorded before it existed. */
    load: ActionLoadSchema.nullable().optional(),
    createdAt: z.number(),
    expiresAt: z.number(),
    decidedAt: z.number().nullable(),
    /** The kind of decision (null while waiting); the one field that says which of the deciders below is set. */
    decision: DecisionKindSchema.nullable(),
    /** Who approved it (only on approved actions; a standing approval names its grant). */
    approver: ApproverSchema.nullable(),
    standingApprovalId: z.string().nullable(),
    /** Who rejected it and why (only on rejected actions). */
    rejectedBy: ApproverSchema.nullable(),
    rejectReason: z.string().nullable(),
    /** Who took it back and why (only on withdrawn actions). */
    withdrawnBy: ApproverSchema.nullable(),
    withdrawReason: z.string().nullable(),
    startedAt: z.number().nullable(),
    finishedAt: z.number().nullable(),
    /** Live progress while running (the step being done). */
    progress: z.string().nullable(),
    drained: z.number().int().nullable(),
    aborted: z.number().int().nullable(),
    /** What the drain's wait for direct tunnel clients at the engine ended with; absent before it ran (and on wake). */
    directAtDrain: DirectDrainSchema.nullable().optional(),
    /** What verification saw (sleep state, VRAM, probe, health), one line each. */
    observed: z.array(z.string()),
    error: z.string().nullable(),
    /** Per planned step (same order as `steps`), how far it got; absent before the run started and on older rows. */
    stepProgress: z.array(StepProgressSchema).optional(),
    /** Set on `interrupted` actions only; absent on older rows. */
    interruption: InterruptionSchema.nullable().optional(),
  })
  .strict();
export type ActionView = z.infer<typeof ActionViewSchema>;

/** What a proposal would be, before it exists: the dialog's content until the operator presses Propose or Approve. */
export const ActionDraftSchema = ActionViewSchema.pick({
  kind: true,
  upstream: true,
  label: true,
  driver: true,
  requiresTypedLabel: true,
  expectedEffect: true,
  expectedDowntimeMs: true,
  downtimeBasis: true,
  steps: true,
  inFlight: true,
  queued: true,
})
  .extend({
    load: ActionLoadSchema.nullable(),
    /** An open proposal of the same kind on this service, which proposing joins. */
    existing: z.object({ id: z.string(), state: ActionStateSchema }).strict().nullable(),
    /** A standing approval that would run it at once, or null. */
    standing: z.string().nullable(),
  })
  .strict();
export type ActionDraft = z.infer<typeof ActionDraftSchema>;

export const StandingApprovalViewSchema = z
  .object({
    id: z.string(),
    kind: ActionKindSchema,
    upstream: UpstreamKeySchema,
    grantedBy: z.string(),
    grantedAt: z.number(),
    expiresAt: z.number(),
    revokedAt: z.number().nullable(),
    uses: z.number().int(),
  })
  .strict();
export type StandingApprovalView = z.infer<typeof StandingApprovalViewSchema>;

/** A service as the Actions view lists it: what its driver can do. */
export const LifecycleTargetSchema = z
  .object({
    upstream: UpstreamKeySchema,
    label: z.string(),
    serviceId: z.string(),
    model: z.string(),
    driver: LifecycleDriverNameSchema,
    supported: z.array(ActionKindSchema),
    /** Why each other kind is not offered (e.g. "sleeps by itself after --sleep-idle-seconds"), for the UI to say. */
    unavailable: z.array(z.object({ kind: ActionKindSchema, reason: z.string() }).strict()).optional(),
  })
  .strict();
export type LifecycleTarget = z.infer<typeof LifecycleTargetSchema>;

const ActionId = z.string().regex(/^act_[A-Za-z0-9_-]{6,64}$/);
const Nonce = z.string().min(8).max(128);
const Reason = z.string().trim().min(1).max(500);

export const lifecycleInvokeChannels = {
  'actions.list': {
    input: z.object({ limit: z.number().int().min(1).max(500).default(100) }).strict(),
    output: z
      .object({ actions: z.array(ActionViewSchema), standing: z.array(StandingApprovalViewSchema), targets: z.array(LifecycleTargetSchema) })
      .strict(),
  },
  /** The draft the dialog shows; nothing is stored or audited. */
  'actions.preview': {
    input: z.object({ upstream: UpstreamKeySchema, kind: ActionKindSchema }).strict(),
    output: z.object({ draft: ActionDraftSchema }).strict(),
  },
  'actions.propose': {
    input: z
      .object({
        upstream: UpstreamKeySchema,
        kind: ActionKindSchema,
        reason: Reason.optional(),
        /** Approved in the same dialog: proposed and approved at once (restart / offload with the label typed). */
        approveNow: z.object({ typedLabel: z.string().max(64).optional(), displayName: z.string().trim().min(1).max(80).optional() }).strict().optional(),
      })
      .strict(),
    output: z.object({ action: ActionViewSchema, collapsed: z.boolean() }).strict(),
  },
  'actions.approve': {
    input: z
      .object({
        id: ActionId,
        nonce: Nonce,
        /** Required for restart and offload: the host label, typed. */
        typedLabel: z.string().max(64).optional(),
        displayName: z.string().trim().min(1).max(80).optional(),
      })
      .strict(),
    output: z.object({ action: ActionViewSchema }).strict(),
  },
  'actions.reject': {
    input: z.object({ id: ActionId, nonce: Nonce, reason: Reason }).strict(),
    output: z.object({ action: ActionViewSchema }).strict(),
  },
  /** The operator takes a waiting proposal back; it closes as withdrawn (audited). */
  'actions.withdraw': {
    input: z.object({ id: ActionId, nonce: Nonce, reason: Reason.optional() }).strict(),
    output: z.object({ action: ActionViewSchema }).strict(),
  },
  /**
   * An interrupted action: read the service's real state now with the checks of
   * the action's kind (reads only: /health, sleep state, a short completion
   * probe, who holds the port). Audited; changes nothing on the server.
   */
  'actions.verifyNow': {
    input: z.object({ id: ActionId }).strict(),
    output: z.object({ action: ActionViewSchema }).strict(),
  },
  'actions.grantStanding': {
    input: z
      .object({
        upstream: UpstreamKeySchema,
        kind: ActionKindSchema,
        durationMinutes: z.number().int().min(1).max(24 * 60),
        typedLabel: z.string().max(64).optional(),
      })
      .strict(),
    output: z.object({ standing: StandingApprovalViewSchema }).strict(),
  },
  'actions.revokeStanding': {
    input: z.object({ id: z.string().regex(/^sa_[A-Za-z0-9_-]{6,64}$/) }).strict(),
    output: z.object({ standing: StandingApprovalViewSchema }).strict(),
  },
} as const;

export const lifecycleEventChannels = {
  /** An action was proposed, decided, progressed or finished. */
  'action.changed': ActionViewSchema,
  /** A standing approval was granted, used, revoked or expired. */
  'action.standing': StandingApprovalViewSchema,
} as const;

/**
 * Who decided an action and why, for every place that words it (Actions
 * view, CLI, evidence reports), so a rejection can never read as an approval.
 * `by`: `Dana Ortiz (dana, via web)` or `standing approval sa_… granted by operator:dana@web`.
 */
export interface DecisionFacts {
  kind: DecisionKind | null;
  by: string | null;
  reason: string | null;
  at: number | null;
}

type DecisionFields = Pick<ActionView, 'decision' | 'decidedAt' | 'approver' | 'standingApprovalId' | 'rejectedBy' | 'rejectReason' | 'withdrawnBy' | 'withdrawReason'>;

export const personText = (p: Approver): string => `${p.displayName} (${p.osUser}, via ${p.via})`;

export function decisionFacts(a: DecisionFields): DecisionFacts {
  const at = a.decidedAt;
  switch (a.decision) {
    case 'approved': {
      const by = a.standingApprovalId !== null ? `standing approval ${a.standingApprovalId}${a.approver ? ` granted by ${a.approver.osUser}` : ''}` : a.approver ? personText(a.approver) : null;
      return { kind: 'approved', by, reason: null, at };
    }
    case 'rejected':
      return { kind: 'rejected', by: a.rejectedBy ? personText(a.rejectedBy) : null, reason: a.rejectReason, at };
    case 'withdrawn':
      return { kind: 'withdrawn', by: a.withdrawnBy ? personText(a.withdrawnBy) : null, reason: a.withdrawReason, at };
    case 'expired':
      return { kind: 'expired', by: null, reason: null, at };
    default:
      return { kind: null, by: null, reason: null, at: null };
  }
}

/** `approved by …`, `rejected by … because …`, `withdrawn by …`, `expired without a decision`, `waiting for a decision`. */
export function decisionSentence(f: DecisionFacts): string {
  const who = f.by ?? 'an unrecorded person';
  switch (f.kind) {
    case 'approved':
      return `approved by ${who}`;
    case 'rejected':
      return `rejected by ${who}${f.reason ? ` because ${f.reason}` : ''}`;
    case 'withdrawn':
      return `withdrawn by ${who}${f.reason ? ` because ${f.reason}` : ''}`;
    case 'expired':
      return 'expired without a decision';
    default:
      return 'waiting for a decision';
  }
}
