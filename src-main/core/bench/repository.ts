// Scenarios, runs and per-request rows in the store (migration 7). A run's
// levels are kept as JSON shaped by the contract's LevelResult.
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import {
  BenchRunSchema,
  BenchScenarioSchema,
  type BenchRequest,
  type BenchRun,
  type BenchScenario,
  type DamagedRun,
  type SavedScenario,
} from '../../../src-preload/contract/index.js';
import { AppError, type Clock } from '../base/index.js';
import type { RecordedRequest } from './aggregate.js';
import { BenchErrorCode } from './errors.js';

interface RunRow {
  id: string;
  name: string;
  state: BenchRun['state'];
  source: BenchRun['source'];
  scenario: string | null;
  upstream: string | null;
  host: string | null;
  model: string | null;
  slots: number | null;
  started_at: number;
  finished_at: number | null;
  levels: string;
  peaks: string;
  baseline: number;
  error: string | null;
  note: string | null;
}

interface RequestRowDb {
  seq: number;
  phase: BenchRequest['phase'];
  level: number;
  start_ms: number;
  queue_ms: number | null;
  ttft_ms: number | null;
  total_ms: number | null;
  itl_ms: string;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  finish_reason: string | null;
  status: number | null;
  error_code: string | null;
  json_ok: number | null;
  schema_ok: number | null;
  schema_error: string | null;
}

export type ReadRun = { ok: true; run: BenchRun } | { ok: false; damaged: DamagedRun };

/**
 * A row as a run, or as damaged with what failed: one bad row (an old import's non-finite figure read
 * back as null, a hand edit) must not take the list, the report or its own deletion down with it.
 */
function readRun(row: RunRow): ReadRun {
  const damaged = (problem: string): ReadRun => ({
    ok: false,
    damaged: { id: row.id, name: typeof row.name === 'string' ? row.name : null, startedAt: typeof row.started_at === 'number' ? row.started_at : null, host: row.host, problem },
  });
  const json: Record<'levels' | 'peaks' | 'error' | 'scenario', unknown> = { levels: null, peaks: null, error: null, scenario: null };
  for (const column of ['levels', 'peaks', 'error', 'scenario'] as const) {
    const text = row[column];
    if (text === null) continue;
    try {
      json[column] = JSON.parse(text);
    } catch (err) {
      return damaged(`${column}: not JSON (${(err as Error).message})`);
    }
  }
  // A scenario that no longer parses (an older shape) is dropped, not fatal: the figures stand alone.
  const scenario = json.scenario === null ? null : BenchScenarioSchema.safeParse(json.scenario);
  const parsed = BenchRunSchema.safeParse({
    id: row.id,
    name: row.name,
    state: row.state,
    source: row.source,
    scenario: scenario?.success ? scenario.data : null,
    upstream: row.upstream,
    host: row.host,
    model: row.model,
    slots: row.slots,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    levels: json.levels,
    peaks: json.peaks,
    baseline: row.baseline === 1,
    error: json.error,
    note: row.note,
  });
  return parsed.success ? { ok: true, run: parsed.data } : damaged(issueText(parsed.error.issues[0]));
}

function issueText(issue: { path: PropertyKey[]; message: string } | undefined): string {
  return issue ? `${issue.path.map(String).join('.') || '(run)'}: ${issue.message}` : 'unreadable';
}

function damagedError(d: DamagedRun): AppError {
  return new AppError(BenchErrorCode.RUN_DAMAGED, `benchmark run ${d.id} is damaged (${d.problem}); it can only be deleted`, { details: { id: d.id, problem: d.problem } });
}

/** Refuses a run that would not read back (JSON writes Infinity and NaN as null), naming the field. */
function checkWritable(run: BenchRun): void {
  const parsed = BenchRunSchema.safeParse(run);
  if (parsed.success) return;
  const problem = issueText(parsed.error.issues[0]);
  throw new AppError(BenchErrorCode.RUN_INVALID, `benchmark run ${run.id} cannot be stored: ${problem}`, { details: { id: run.id, problem } });
}

const bool = (v: boolean | null) => (v === null ? null : v ? 1 : 0);
const fromBool = (v: number | null) => (v === null ? null : v === 1);

export class BenchRepository {
  constructor(
    private readonly db: Database.Database,
    private readonly clock: Clock,
  ) {}

  listScenarios(): SavedScenario[] {
    const rows = this.db.prepare<[], { id: string; scenario: string; created_at: number; updated_at: number }>('SELECT * FROM bench_scenarios ORDER BY name').all();
    const out: SavedScenario[] = [];
    for (const r of rows) {
      const parsed = BenchScenarioSchema.safeParse(JSON.parse(r.scenario));
      if (parsed.success) out.push({ id: r.id, scenario: parsed.data, createdAt: r.created_at, updatedAt: r.updated_at });
    }
    return out;
  }

  getScenario(id: string): SavedScenario {
    const found = this.listScenarios().find((s) => s.id === id);
    if (!found) throw new AppError(BenchErrorCode.SCENARIO_NOT_FOUND, `no saved scenario ${id}`, { details: { id } });
    return found;
  }

  saveScenario(scenario: BenchScenario, id?: string): SavedScenario {
    const now = Math.floor(this.clock.now());
    const key = id ?? randomUUID().slice(0, 8);
    this.db
      .prepare(
        `INSERT INTO bench_scenarios (id, name, scenario, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, scenario = excluded.scenario, updated_at = excluded.updated_at`,
      )
      .run(key, scenario.name, JSON.stringify(scenario), now, now);
    return this.getScenario(key);
  }

  deleteScenario(id: string): void {
    this.db.prepare('DELETE FROM bench_scenarios WHERE id = ?').run(id);
  }

  insertRun(run: BenchRun): void {
    checkWritable(run);
    this.db
      .prepare(
        `INSERT INTO bench_runs (id, name, state, source, scenario, upstream, host, model, slots, started_at, finished_at, levels, peaks, baseline, error, note)
         VALUES (@id, @name, @state, @source, @scenario, @upstream, @host, @model, @slots, @started_at, @finished_at, @levels, @peaks, @baseline, @error, @note)`,
      )
      .run(this.row(run));
  }

  /** Final write of a run: its figures and every request, in one transaction. */
  finishRun(run: BenchRun, requests: readonly RecordedRequest[]): void {
    checkWritable(run);
    const update = this.db.prepare(
      `UPDATE bench_runs SET state = @state, finished_at = @finished_at, levels = @levels, peaks = @peaks, error = @error, note = @note WHERE id = @id`,
    );
    const insert = this.db.prepare(
      `INSERT INTO bench_requests (run_id, seq, phase, level, start_ms, queue_ms, ttft_ms, total_ms, itl_ms, prompt_tokens, completion_tokens,
         finish_reason, status, error_code, json_ok, schema_ok, schema_error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.db.transaction(() => {
      update.run(this.row(run));
      for (const r of requests) {
        insert.run(
          run.id,
          r.seq,
          r.phase,
          r.level,
          r.startMs,
          r.queueMs,
          r.ttftMs,
          r.totalMs,
          JSON.stringify(r.itlMs.slice(0, 8192).map((v) => Math.round(v * 100) / 100)),
          r.promptTokens,
          r.completionTokens,
          r.finishReason,
          r.status,
          r.cancelled ? 'cancelled' : r.errorCode,
          bool(r.jsonOk),
          bool(r.schemaOk),
          r.schemaError,
        );
      }
    })();
  }

  /** The run, or BENCH_RUN_NOT_FOUND, or BENCH_RUN_DAMAGED naming what failed. */
  getRun(id: string): BenchRun {
    const read = this.readRun(id);
    if (!read.ok) throw damagedError(read.damaged);
    return read.run;
  }

  /**
   * Runs that overlap [fromMs, toMs] (started before toMs, finished — or, still
   * running, started — at or after fromMs), oldest first; each a run or what is
   * damaged in it. The report's window of runs.
   */
  runsOverlapping(fromMs: number, toMs: number): ReadRun[] {
    return this.db
      .prepare<[number, number], RunRow>('SELECT * FROM bench_runs WHERE started_at < ? AND COALESCE(finished_at, started_at) >= ? ORDER BY started_at')
      .all(toMs, fromMs)
      .map(readRun);
  }

  /** The run or what is damaged in it (BENCH_RUN_NOT_FOUND when there is no such row). */
  readRun(id: string): ReadRun {
    const row = this.db.prepare<[string], RunRow>('SELECT * FROM bench_runs WHERE id = ?').get(id);
    if (!row) throw new AppError(BenchErrorCode.RUN_NOT_FOUND, `no benchmark run ${id}`, { details: { id } });
    return readRun(row);
  }

  /** The newest runs; rows that no longer read as runs come apart, with what failed, never failing the list. */
  listRuns(limit: number): { runs: BenchRun[]; damaged: DamagedRun[] } {
    const out: { runs: BenchRun[]; damaged: DamagedRun[] } = { runs: [], damaged: [] };
    for (const row of this.db.prepare<[number], RunRow>('SELECT * FROM bench_runs ORDER BY started_at DESC LIMIT ?').all(limit)) {
      const read = readRun(row);
      if (read.ok) out.runs.push(read.run);
      else out.damaged.push(read.damaged);
    }
    return out;
  }

  requests(id: string): BenchRequest[] {
    return this.db
      .prepare<[string], RequestRowDb>('SELECT * FROM bench_requests WHERE run_id = ? ORDER BY seq')
      .all(id)
      .map((r) => ({
        seq: r.seq,
        phase: r.phase,
        level: r.level,
        startMs: r.start_ms,
        queueMs: r.queue_ms,
        ttftMs: r.ttft_ms,
        totalMs: r.total_ms,
        itlMs: JSON.parse(r.itl_ms) as number[],
        promptTokens: r.prompt_tokens,
        completionTokens: r.completion_tokens,
        finishReason: r.finish_reason,
        status: r.status,
        errorCode: r.error_code,
        jsonOk: fromBool(r.json_ok),
        schemaOk: fromBool(r.schema_ok),
        schemaError: r.schema_error,
      }));
  }

  /** Deletes a run, damaged or not (its requests go with it); BENCH_RUN_NOT_FOUND when there is none. */
  deleteRun(id: string): void {
    const gone = this.db.prepare('DELETE FROM bench_runs WHERE id = ?').run(id);
    if (gone.changes === 0) throw new AppError(BenchErrorCode.RUN_NOT_FOUND, `no benchmark run ${id}`, { details: { id } });
  }

  /** One baseline per model (and host): the others of that model lose the mark. */
  markBaseline(run: BenchRun): void {
    this.db.transaction(() => {
      this.db.prepare('UPDATE bench_runs SET baseline = 0 WHERE model IS ? AND host IS ?').run(run.model, run.host);
      this.db.prepare('UPDATE bench_runs SET baseline = 1 WHERE id = ?').run(run.id);
    })();
  }

  /** Runs left `running` by a console that stopped mid-run. */
  markInterrupted(): void {
    this.db
      .prepare(`UPDATE bench_runs SET state = 'failed', error = ?, finished_at = started_at WHERE state = 'running'`)
      .run(JSON.stringify({ code: BenchErrorCode.INTERRUPTED, message: 'the console stopped while this run was in progress' }));
  }

  private row(run: BenchRun): RunRow {
    return {
      id: run.id,
      name: run.name,
      state: run.state,
      source: run.source,
      scenario: run.scenario ? JSON.stringify(run.scenario) : null,
      upstream: run.upstream,
      host: run.host,
      model: run.model,
      slots: run.slots,
      started_at: Math.floor(run.startedAt),
      finished_at: run.finishedAt === null ? null : Math.floor(run.finishedAt),
      levels: JSON.stringify(run.levels),
      peaks: JSON.stringify(run.peaks),
      baseline: run.baseline ? 1 : 0,
      error: run.error ? JSON.stringify(run.error) : null,
      note: run.note,
    };
  }
}
