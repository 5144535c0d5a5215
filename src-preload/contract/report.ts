import { z } from 'zod';
import { HostLabelSchema } from './primitives.js';
import { ServiceKindSchema } from './service-kind.js';
import { BenchRunSchema, EvaluationSchema } from './bench.js';
import { AlertHistoryEntrySchema, SilenceSchema } from './alerts.js';
import { DecisionKindSchema } from './lifecycle.js';
import { CostWindowFiguresSchema, EstimateSchema } from './telemetry.js';
import { EvidenceHostStateSchema, EvidenceLogExcerptSchema } from './report-host.js';

export { EvidenceHostStateSchema, EvidenceLogExcerptSchema, type EvidenceHostState, type EvidenceLogExcerpt } from './report-host.js';

// Contract channels of the report capability, merged into the channel table in
// channels.ts, and the evidence model every report format is rendered from.
//
// The evidence JSON is a published format (`gpu-console.evidence/2`): other
// tools read it and signatures cover it. Changing its shape means a new schema
// version; test/unit/contract/published-schemas.test.ts pins the JSON Schema (resources/schemas/) so a
// change cannot slip in unnoticed. Version 2: each action says its decision and
// who made it (approver, rejecter, withdrawer apart), the counts add withdrawn,
// expired and pending; cost rows cover only the time the console observed each
// host (coverage stated) and unknown output tokens are null, not 0. Version 3
// (issue #29 item 7): each host's health at export (`hostState`: disks, memory,
// load, uptime and reboot, GPU processes and flags, GPU faults, each with its
// own reading time), the `auto.disk.margin` gate, and the log lines around each
// lifecycle action (`logExcerpts`) only when the operator asked for them.
// Version 4 (issue #30 item 5): the alerts section's history (`alertHistory`:
// each alert from raise to clear with its worst severity, duration, who
// acknowledged it, the silence that covered it and its incident) and the
// silences of the window, both from the audit log.

export const EVIDENCE_SCHEMA_VERSION = 'gpu-console.evidence/4' as const;
/** Versions verification still reads (exports signed before a change are still checked). */
export const EVIDENCE_SCHEMA_VERSIONS_READ = ['gpu-console.evidence/1', 'gpu-console.evidence/2', 'gpu-console.evidence/3', EVIDENCE_SCHEMA_VERSION] as const;
export const MANIFEST_SCHEMA_VERSION = 'gpu-console.evidence-manifest/1' as const;
/** SSHSIG namespace of every signature the console makes (`ssh-keygen -Y verify -n …`). */
export const EVIDENCE_SIGNATURE_NAMESPACE = 'gpu-console-evidence' as const;

const Label = HostLabelSchema;

export const ReportSectionSchema = z.enum(['inventory', 'security', 'health', 'benchmarks', 'cost', 'lifecycle', 'alerts', 'gates']);
export type ReportSection = z.infer<typeof ReportSectionSchema>;
export const REPORT_SECTIONS: readonly ReportSection[] = ReportSectionSchema.options;

export const ReportFormatSchema = z.enum(['md', 'html', 'json', 'pdf']);
export type ReportFormat = z.infer<typeof ReportFormatSchema>;

/** What to report on. Hosts empty = every host in the inventory. */
export const ReportRequestSchema = z
  .object({
    title: z.string().min(1).max(200).optional(),
    hosts: z.array(Label).max(256).default([]),
    fromMs: z.number().int().nonnegative(),
    toMs: z.number().int().positive(),
    sections: z.array(ReportSectionSchema).min(1).default([...REPORT_SECTIONS]),
    /** Run the live checks (SSH commands and probes through the tunnel) now; false = store only. */
    live: z.boolean().default(true),
    /**
     * Include the service's log lines around each lifecycle action in the window (masked, bounded).
     * Off by default: log text reaches a report only when the operator ticks this.
     */
    includeLogs: z.boolean().default(false),
  })
  .strict()
  .refine((r) => r.fromMs < r.toMs, { message: 'fromMs must be before toMs', path: ['fromMs'] });
export type ReportRequest = z.infer<typeof ReportRequestSchema>;
export type ReportRequestInput = z.input<typeof ReportRequestSchema>;

/** Every check and gate: pass, fail, or unverified (could not be measured — never shown as pass). */
export const VerdictSchema = z.enum(['pass', 'fail', 'unverified']);
export type Verdict = z.infer<typeof VerdictSchema>;

export const CheckSchema = z
  .object({
    id: z.string(),
    label: z.string(),
    verdict: VerdictSchema,
    /** What was seen, in words an auditor can re-check (command output excerpt, status code). */
    evidence: z.string(),
    /** When it was measured (ms epoch); null when not measured. */
    at: z.number().nullable(),
  })
  .strict();
export type Check = z.infer<typeof CheckSchema>;

// ── inventory ─────────────────────────────────────────────────────────────

export const InventoryGpuSchema = z
  .object({
    index: z.number().int(),
    name: z.string(),
    memoryTotalMiB: z.number().nullable(),
    driverVersion: z.string().nullable(),
  })
  .strict();

export const InventoryServiceSchema = z
  .object({
    id: z.string(),
    kind: ServiceKindSchema,
    model: z.string(),
    aliases: z.array(z.string()),
    remotePort: z.number().int(),
    slots: z.number().int(),
    /** From `/version` (vLLM) or `/props` (llama-server build info); null when not answered. */
    serverVersion: z.string().nullable(),
    /** Models the server lists at `/v1/models`, with their max context where it says. */
    servedModels: z.array(z.object({ id: z.string(), maxContext: z.number().int().nullable() }).strict()),
    health: z.enum(['ok', 'down', 'unknown']),
    /** The service's config, secrets replaced by "[redacted]". */
    config: z.record(z.string(), z.unknown()),
  })
  .strict();
export type InventoryService = z.infer<typeof InventoryServiceSchema>;

export const InventoryHostSchema = z
  .object({
    label: z.string(),
    /** `user@host:port` as configured (no credentials). */
    address: z.string(),
    jumpHost: z.string().nullable(),
    /** `builtin (ssh2)` or `openssh (OpenSSH_9.2p1 …)`, with why it was chosen; optional in older evidence. */
    sshTransport: z.string().nullable().optional(),
    connection: z.string(),
    /** Why live facts are missing (host down during the checks); null when they were read. */
    liveError: z.string().nullable(),
    hostKeyFingerprint: z.string().nullable(),
    pricePerHourUsd: z.number().nullable(),
    gpus: z.array(InventoryGpuSchema),
    services: z.array(InventoryServiceSchema),
  })
  .strict();
export type InventoryHost = z.infer<typeof InventoryHostSchema>;

// ── security ──────────────────────────────────────────────────────────────

export const HostSecuritySchema = z.object({ host: z.string(), checks: z.array(CheckSchema) }).strict();
export type HostSecurity = z.infer<typeof HostSecuritySchema>;

// ── health ────────────────────────────────────────────────────────────────

export const PeriodSchema = z.object({ fromMs: z.number(), toMs: z.number(), reason: z.string() }).strict();

export const HostHealthSchema = z
  .object({
    host: z.string(),
    /** Share of the window with fresh telemetry (10 s buckets holding data ÷ buckets in the window); null without any sample. */
    telemetryCoveragePct: z.number().nullable(),
    /** Gaps of 60 s or more without telemetry. */
    stalePeriods: z.array(PeriodSchema),
    /** Reconnects and connection losses recorded in the audit log within the window. */
    reconnects: z.number().int(),
    connectionEvents: z.array(z.object({ at: z.number(), type: z.string(), detail: z.string() }).strict()),
  })
  .strict();
export type HostHealth = z.infer<typeof HostHealthSchema>;

// ── benchmarks ────────────────────────────────────────────────────────────

/** A benchmark run as evidence: the run's own fields (derived from the bench schema) and its evaluation. */
export const EvidenceRunSchema = BenchRunSchema.pick({
  id: true,
  name: true,
  state: true,
  source: true,
  host: true,
  model: true,
  upstream: true,
  startedAt: true,
  finishedAt: true,
  baseline: true,
  levels: true,
  peaks: true,
})
  .extend({ evaluation: EvaluationSchema })
  .strict();
export type EvidenceRun = z.infer<typeof EvidenceRunSchema>;

// ── cost ──────────────────────────────────────────────────────────────────

/**
 * One host's cost over the report's window: the host view's figures for that
 * window (`cost.summary`, one function): the window cut at the build time,
 * the time the console observed the host in it and the coverage, output
 * tokens (null when unknown), the price of the observed time and the cost per
 * 1M output tokens over busy and over observed time.
 */
export const EvidenceCostSchema = CostWindowFiguresSchema.extend({
  host: z.string(),
  pricePerHourUsd: z.number().nullable(),
  perMillionOutputUsageBased: EstimateSchema,
  perMillionOutputReservationBased: EstimateSchema,
}).strict();
export type EvidenceCost = z.infer<typeof EvidenceCostSchema>;

// ── lifecycle and alerts ──────────────────────────────────────────────────

export const EvidenceActionSchema = z
  .object({
    id: z.string(),
    kind: z.string(),
    upstream: z.string(),
    state: z.string(),
    proposer: z.string(),
    reason: z.string(),
    proposedAt: z.number(),
    /** How it was decided; null while it waits. */
    decision: DecisionKindSchema.nullable(),
    /** `display name (os user, via …)` or the standing approval that covered it; only on approved actions. */
    approvedBy: z.string().nullable(),
    /** Who rejected it; only on rejected actions. */
    rejectedBy: z.string().nullable(),
    /** Who took it back; only on withdrawn actions. */
    withdrawnBy: z.string().nullable(),
    /** Why it was rejected or withdrawn, as given. */
    decisionReason: z.string().nullable(),
    decidedAt: z.number().nullable(),
    finishedAt: z.number().nullable(),
    drained: z.number().int().nullable(),
    aborted: z.number().int().nullable(),
    observed: z.array(z.string()),
    /** What went wrong while it ran (failed actions). */
    error: z.string().nullable(),
  })
  .strict();
export type EvidenceAction = z.infer<typeof EvidenceActionSchema>;

export const EvidenceAlertSchema = z
  .object({
    seq: z.number().int(),
    at: z.number(),
    /** raised | changed | cleared */
    event: z.string(),
    target: z.string().nullable(),
    kind: z.string(),
    severity: z.string(),
    message: z.string(),
  })
  .strict();
export type EvidenceAlert = z.infer<typeof EvidenceAlertSchema>;

/** The alerts of the window as a shift reads them (evidence/4), and the silences in force at some time in it. */
export const EvidenceAlertHistorySchema = z
  .object({
    alerts: z.array(AlertHistoryEntrySchema),
    silences: z.array(SilenceSchema),
    /** True when the list was cut at its bound. */
    truncated: z.boolean(),
  })
  .strict();
export type EvidenceAlertHistory = z.infer<typeof EvidenceAlertHistorySchema>;

// ── gates ─────────────────────────────────────────────────────────────────

export const GateStatusSchema = z.enum(['pass', 'fail', 'pending', 'unverified']);
export type GateStatus = z.infer<typeof GateStatusSchema>;

export const GateSchema = z
  .object({
    id: z.string(),
    label: z.string(),
    /** auto: computed from the evidence; manual: marked by an operator with a note. */
    kind: z.enum(['auto', 'manual']),
    /** auto: pass | fail | unverified; manual: pass | fail | pending. */
    status: GateStatusSchema,
    evidence: z.string(),
    note: z.string().nullable(),
    markedBy: z.string().nullable(),
    markedAt: z.number().nullable(),
  })
  .strict();
export type Gate = z.infer<typeof GateSchema>;

// ── charts ────────────────────────────────────────────────────────────────

/** Data for one chart image (HTML and PDF); at most 400 points per series. */
export const EvidenceChartSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    host: z.string().nullable(),
    unit: z.string(),
    kind: z.enum(['line', 'bar']),
    /** x values: ms epoch for line charts, category labels for bar charts. */
    x: z.array(z.union([z.number(), z.string()])),
    series: z.array(z.object({ name: z.string(), values: z.array(z.number().nullable()) }).strict()),
  })
  .strict();
export type EvidenceChart = z.infer<typeof EvidenceChartSchema>;

// ── the evidence ──────────────────────────────────────────────────────────

export const AuditCoverageSchema = z
  .object({
    /** First and last audit row inside the window (null when none). */
    fromSeq: z.number().int().nullable(),
    toSeq: z.number().int().nullable(),
    /** The chain head when the report was built: every row up to it hashes to this. */
    headSeq: z.number().int().nullable(),
    headHash: z.string().nullable(),
    /** Whether the whole chain verified when the report was built. */
    chainVerified: z.boolean(),
    chainProblem: z.string().nullable(),
    /** Rows 1..throughSeq walked in full at `at`, the rest at the build from that head; null: none verified; absent: older export (a full walk at its build). */
    fullWalk: z.object({ throughSeq: z.number().int().nonnegative(), at: z.number() }).strict().nullable().optional(),
  })
  .strict();
export type AuditCoverage = z.infer<typeof AuditCoverageSchema>;

export const EvidenceSchema = z
  .object({
    schema: z.literal(EVIDENCE_SCHEMA_VERSION),
    /** Random id of this build of the evidence. */
    id: z.string(),
    title: z.string(),
    generatedAt: z.number(),
    generatedBy: z.string(),
    console: z.object({ version: z.string(), mode: z.enum(['electron', 'web']), demo: z.boolean() }).strict(),
    window: z.object({ fromMs: z.number(), toMs: z.number() }).strict(),
    hosts: z.array(z.string()),
    sections: z.array(ReportSectionSchema),
    /** Plain sentences on anything that limits the report (an empty window, a host down during checks). */
    notes: z.array(z.string()),
    inventory: z.array(InventoryHostSchema).nullable(),
    security: z.array(HostSecuritySchema).nullable(),
    health: z.array(HostHealthSchema).nullable(),
    /** Each host's health, GPU processes and faults at export (with the health section or the gates). */
    hostState: z.array(EvidenceHostStateSchema).nullable(),
    benchmarks: z.array(EvidenceRunSchema).nullable(),
    /** Evaluation figures over the proxy's traffic in the window. */
    trafficEvaluation: EvaluationSchema.nullable(),
    cost: z.array(EvidenceCostSchema).nullable(),
    lifecycle: z
      .object({
        actions: z.array(EvidenceActionSchema),
        /** Actions proposed in the window, by their decision: proposed = approved + rejected + withdrawn + expired + pending. */
        proposed: z.number().int(),
        approved: z.number().int(),
        rejected: z.number().int(),
        withdrawn: z.number().int(),
        expired: z.number().int(),
        /** Still waiting for a decision when the report was built. */
        pending: z.number().int(),
        verified: z.number().int(),
        failed: z.number().int(),
        drained: z.number().int(),
        aborted: z.number().int(),
      })
      .strict()
      .nullable(),
    alerts: z.array(EvidenceAlertSchema).nullable(),
    /** With the alerts section: each alert's duration, acknowledgement and silence, and the window's silences. */
    alertHistory: EvidenceAlertHistorySchema.nullable(),
    /** Log lines around each lifecycle action; null unless the request asked for them (includeLogs). */
    logExcerpts: z.array(EvidenceLogExcerptSchema).nullable(),
    gates: z.array(GateSchema).nullable(),
    charts: z.array(EvidenceChartSchema),
    audit: AuditCoverageSchema,
  })
  .strict();
export type Evidence = z.infer<typeof EvidenceSchema>;

// ── exports, signing, verification ────────────────────────────────────────

export const ManifestFileSchema = z
  .object({ name: z.string(), format: ReportFormatSchema, sizeBytes: z.number().int(), sha256: z.string().regex(/^[0-9a-f]{64}$/) })
  .strict();
export type ManifestFile = z.infer<typeof ManifestFileSchema>;

/** `manifest.json` of an export: what the signature covers. */
export const ManifestSchema = z
  .object({
    schema: z.literal(MANIFEST_SCHEMA_VERSION),
    evidenceId: z.string(),
    createdAt: z.number(),
    /** SHA-256 of canonical JSON of the evidence (the same bytes as evidence.json). */
    evidenceSha256: z.string().regex(/^[0-9a-f]{64}$/),
    files: z.array(ManifestFileSchema),
    audit: AuditCoverageSchema,
  })
  .strict();
export type Manifest = z.infer<typeof ManifestSchema>;

export const SignRequestSchema = z.union([
  z
    .object({
      /** Private key file (OpenSSH or PEM; ed25519, ECDSA, RSA). */
      keyFile: z.string().min(1).max(4096),
      /** For an encrypted key; used once and kept nowhere. */
      passphrase: z.string().max(1024).optional(),
    })
    .strict(),
  z
    .object({
      /** Sign with a key held by the console's ssh-agent (SSH_AUTH_SOCK); the key never leaves the agent. */
      agent: z.literal(true),
      /** `SHA256:` fingerprint or a word of the key's comment; default the agent's first usable key. */
      key: z.string().min(1).max(200).optional(),
    })
    .strict(),
]);
export type SignRequest = z.infer<typeof SignRequestSchema>;

export const ReportExportSchema = z
  .object({
    id: z.string(),
    createdAt: z.number(),
    actor: z.string(),
    title: z.string(),
    dir: z.string(),
    fromMs: z.number(),
    toMs: z.number(),
    hosts: z.array(z.string()),
    sections: z.array(ReportSectionSchema),
    files: z.array(ManifestFileSchema),
    evidenceSha256: z.string(),
    manifestSha256: z.string(),
    /** SHA256 fingerprint of the signing key; null when unsigned. */
    signer: z.string().nullable(),
    gates: z.object({ pass: z.number().int(), fail: z.number().int(), pending: z.number().int(), unverified: z.number().int() }).strict(),
  })
  .strict();
export type ReportExport = z.infer<typeof ReportExportSchema>;

export const VerifyFindingSchema = z
  .object({ check: z.string(), ok: z.boolean(), detail: z.string() })
  .strict();

export const ReportVerifyResultSchema = z
  .object({
    ok: z.boolean(),
    dir: z.string(),
    signature: z.enum(['valid', 'invalid', 'missing']),
    signer: z.string().nullable(),
    /** The audit check ran only when a database was given. */
    auditChecked: z.boolean(),
    findings: z.array(VerifyFindingSchema),
  })
  .strict();
export type ReportVerifyResult = z.infer<typeof ReportVerifyResultSchema>;

export const ReportProgressSchema = z
  .object({
    exportId: z.string(),
    step: z.string(),
    done: z.number().int(),
    total: z.number().int(),
    state: z.enum(['running', 'done', 'failed']),
    message: z.string().nullable(),
  })
  .strict();
export type ReportProgress = z.infer<typeof ReportProgressSchema>;

/** The manual gates an operator marks (field notes §1's gate table). */
export const ManualGateMarkSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9.-]{0,63}$/),
    status: z.enum(['pass', 'fail', 'pending']),
    note: z.string().max(2000),
  })
  .strict();

const Empty = z.object({}).strict();

export const reportInvokeChannels = {
  /** Builds the evidence now and renders the self-contained HTML for the live preview. */
  'reports.preview': {
    input: z.object({ request: ReportRequestSchema }).strict(),
    output: z.object({ evidence: EvidenceSchema, html: z.string() }).strict(),
  },
  /** Builds, renders, digests and (optionally) signs an export into a new folder. Progress: `report.progress`. */
  'reports.export': {
    input: z
      .object({
        request: ReportRequestSchema,
        formats: z.array(ReportFormatSchema).min(1).max(4),
        sign: SignRequestSchema.nullable().default(null),
        /** Parent folder for the export's own folder; default `<data dir>/reports`. */
        outDir: z.string().min(1).max(4096).optional(),
      })
      .strict(),
    output: ReportExportSchema,
  },
  'reports.list': {
    input: z.object({ limit: z.number().int().min(1).max(500).default(50) }).strict(),
    output: z.object({ exports: z.array(ReportExportSchema) }).strict(),
  },
  /** Checks an export folder: digests, signature, and the audit rows it covers against this console's database. */
  'reports.verify': {
    input: z.object({ dir: z.string().min(1).max(4096) }).strict(),
    output: ReportVerifyResultSchema,
  },
  'reports.gates': { input: Empty, output: z.object({ gates: z.array(GateSchema) }).strict() },
  'reports.setGate': { input: ManualGateMarkSchema, output: GateSchema },
} as const;

export const reportEventChannels = {
  'report.progress': ReportProgressSchema,
} as const;
