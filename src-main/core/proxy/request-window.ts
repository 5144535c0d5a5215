// Windows of the proxy's request log for other capabilities: the answered
// requests the cost split reads (telemetry) and the completions an evaluation
// of the proxy's own traffic reads (bench). The requests table is the proxy's;
// others read it only through these queries. Rows are as written by RequestLog
// (its batches are flushed every few seconds, so the newest may not be here yet).
import type Database from 'better-sqlite3';
import type { RequestSpanRow } from '../cost/index.js';

/** An answered request (status < 400): when, how long, for whom, how many tokens out — the row the cost split reads. */
export type AnsweredRequestRow = RequestSpanRow;

/** A chat or text completion, answered or not. */
export interface CompletionRequestRow {
  ts: number;
  total_ms: number;
  queue_ms: number;
  ttft_ms: number | null;
  status: number;
  error_code: string | null;
  tokens_out: number | null;
  upstream: string | null;
  model: string | null;
}

export interface RequestWindows {
  /** Answered requests with fromMs ≤ ts < toMs. */
  answered(fromMs: number, toMs: number): AnsweredRequestRow[];
  /** Requests to an endpoint ending in `completions` (chat and text completions) with fromMs ≤ ts < toMs. */
  completions(fromMs: number, toMs: number): CompletionRequestRow[];
}

export function requestWindows(db: Database.Database): RequestWindows {
  const answered = db.prepare<[number, number], AnsweredRequestRow>('SELECT ts, total_ms, model, client, tokens_out, upstream FROM requests WHERE ts >= ? AND ts < ? AND status < 400');
  const completions = db.prepare<[number, number], CompletionRequestRow>(
    "SELECT ts, total_ms, queue_ms, ttft_ms, status, error_code, tokens_out, upstream, model FROM requests WHERE ts >= ? AND ts < ? AND endpoint LIKE '%completions'",
  );
  return {
    answered: (fromMs, toMs) => answered.all(fromMs, toMs),
    completions: (fromMs, toMs) => completions.all(fromMs, toMs),
  };
}
