// The report capability's front: preview, export (one at a time, with
// progress), past exports, manual gates and verification. Each export and each
// gate mark is an audit event; a signing passphrase is used once and kept
// nowhere, and an agent-held key never leaves the agent.
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import type {
  Evidence,
  Gate,
  ReportExport,
  ReportFormat,
  ReportProgress,
  ReportRequest,
  ReportVerifyResult,
  SignRequest,
} from '../../../src-preload/contract/index.js';
import { AppError, BaseErrorCode, fireAndForget, type Clock, type Logger } from '../base/index.js';
import type { PdfPrinter } from '../ports.js';
import { expandTilde } from '../ssh/index.js';
import { canonicalJson, type AuditLog } from '../store/index.js';
import { buildEvidence, type ReportSources } from './builder.js';
import { ReportErrorCode, stopIfCancelled } from './errors.js';
import { ensureWritableDir, removeAbandonedStaging, sha256Hex, writeExport } from './exporter.js';
import { gateCounts, isManualGate, manualGates } from './gates.js';
import { renderHtml } from './render-html.js';
import type { ReportRepository } from './repository.js';
import { agentSigner, loadSigner } from './sshsig.js';
import { verifyExport } from './verify.js';

export interface ReportServiceOptions {
  repo: ReportRepository;
  audit: AuditLog;
  clock: Clock;
  logger: Logger;
  /** Sources for a caller (the actor differs per call). */
  sources(actor: string): ReportSources;
  pdf: PdfPrinter | null;
  defaultDir: string;
  /** Who signs, for allowed_signers (e.g. the OS user). */
  principal: string;
  /** The console's own database, for verifying the audit rows an export covers. */
  db: Database.Database;
  emitProgress(p: ReportProgress): void;
  /** The ssh-agent socket for agent signing (SSH_AUTH_SOCK of the console). */
  agentSocket(): string | undefined;
  /** For `~/` in key and folder paths typed by the operator. */
  home: string;
}

export interface ExportInput {
  request: ReportRequest;
  formats: ReportFormat[];
  sign: SignRequest | null;
  outDir?: string;
  /** The caller gave up: stop at the next step, leave no folder. */
  signal?: AbortSignal;
}

export class ReportService {
  private running: string | null = null;

  constructor(private readonly o: ReportServiceOptions) {
    // A console killed mid-export left its staging folder behind (never listed: only finished exports are).
    fireAndForget(removeAbandonedStaging(o.defaultDir), o.logger, 'removing abandoned report staging folders');
  }

  async preview(request: ReportRequest, actor: string, signal?: AbortSignal): Promise<{ evidence: Evidence; html: string }> {
    const evidence = await buildEvidence(request, { ...this.o.sources(actor), signal });
    return { evidence, html: renderHtml(evidence, { evidenceSha256: sha256Hex(canonicalJson(evidence)) }) };
  }

  async export(input: ExportInput, actor: string): Promise<ReportExport> {
    if (this.running) throw new AppError(ReportErrorCode.EXPORT_RUNNING, `export ${this.running} is still running; wait for it to finish`, { retryable: true });
    const id = `r${this.o.clock.now().toString(36)}${randomBytes(3).toString('hex')}`;
    this.running = id;
    const formats = [...new Set(input.formats)];
    const total = 3 + formats.length + (input.sign ? 1 : 0);
    let done = 0;
    const progress = (step: string, state: ReportProgress['state'] = 'running', message: string | null = null) =>
      this.o.emitProgress({ exportId: id, step, done: Math.min(done, total), total, state, message });
    try {
      // Cheap checks first: a bad folder or key fails before anything slow runs.
      const parentDir = input.outDir ? expandTilde(input.outDir, this.o.home) : this.o.defaultDir;
      progress('checking the output folder');
      // A missing folder with missing parents is created only in the operator's home or the reports folder.
      await ensureWritableDir(parentDir, [this.o.home, this.o.defaultDir]);
      const sign = input.sign;
      const signer = !sign ? null : 'agent' in sign ? await agentSigner(this.o.agentSocket(), sign.key) : await loadSigner(expandTilde(sign.keyFile, this.o.home), sign.passphrase);
      stopIfCancelled(input.signal);
      done += 1;
      progress('building the evidence');
      const sources = this.o.sources(actor);
      const evidence = await buildEvidence(input.request, {
        ...sources,
        signal: input.signal,
        onProgress: (step, d, t) => progress(`${step} (${d}/${t} hosts)`),
      });
      stopIfCancelled(input.signal);
      done += 1;
      const stamp = new Date(evidence.generatedAt).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z').replace('T', '-');
      const files = await writeExport({
        evidence,
        formats,
        parentDir,
        name: `report-${stamp}-${id.slice(-6)}`,
        signer,
        principal: this.o.principal,
        pdf: this.o.pdf,
        now: () => this.o.clock.now(),
        signal: input.signal,
        progress: (step) => {
          stopIfCancelled(input.signal);
          done += 1;
          progress(`writing ${step}`);
        },
      });
      const record: ReportExport = {
        id,
        createdAt: this.o.clock.now(),
        actor,
        title: evidence.title,
        dir: files.dir,
        fromMs: evidence.window.fromMs,
        toMs: evidence.window.toMs,
        hosts: evidence.hosts,
        sections: evidence.sections,
        files: files.files,
        evidenceSha256: files.evidenceSha256,
        manifestSha256: files.manifestSha256,
        signer: files.signer,
        gates: gateCounts(evidence.gates),
      };
      this.o.repo.addExport(record, () => this.o.audit.append({
        type: 'report.exported',
        actor,
        target: id,
        payload: {
          dir: files.dir,
          evidenceId: evidence.id,
          evidenceSha256: files.evidenceSha256,
          manifestSha256: files.manifestSha256,
          files: files.files.map((f) => ({ name: f.name, sha256: f.sha256 })),
          signer: files.signer,
          auditHeadSeq: evidence.audit.headSeq,
          auditHeadHash: evidence.audit.headHash,
          window: evidence.window,
          hosts: evidence.hosts,
        },
      }));
      done = total;
      progress('done', 'done', files.dir);
      return record;
    } catch (err) {
      const e = err instanceof AppError ? err : new AppError(BaseErrorCode.INTERNAL_ERROR, (err as Error).message, { cause: err });
      this.o.audit.append({ type: 'report.export.failed', actor, target: id, payload: { code: e.code, message: e.message } });
      progress('failed', 'failed', `${e.code}: ${e.message}`);
      throw err;
    } finally {
      this.running = null;
    }
  }

  list(limit: number): ReportExport[] {
    return this.o.repo.listExports(limit);
  }

  gates(): Gate[] {
    return manualGates(this.o.repo.gateMarks());
  }

  setGate(mark: { id: string; status: 'pass' | 'fail' | 'pending'; note: string }, actor: string): Gate {
    if (!isManualGate(mark.id)) throw new AppError(ReportErrorCode.UNKNOWN_GATE, `no manual gate "${mark.id}"`, { details: { id: mark.id } });
    const before = this.o.repo.gateMarks().get(mark.id);
    const markedAt = this.o.clock.now();
    this.o.repo.setGate({ ...mark, markedBy: actor, markedAt });
    this.o.audit.append({
      type: 'report.gate.marked',
      actor,
      target: mark.id,
      payload: { status: mark.status, note: mark.note, previous: before ? before.status : null },
    });
    return manualGates(this.o.repo.gateMarks()).find((g) => g.id === mark.id)!;
  }

  verify(dir: string): Promise<ReportVerifyResult> {
    return verifyExport(dir, { db: this.o.db });
  }
}
