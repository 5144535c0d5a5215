// Proxy-side figures per upstream and class over a sliding window: queue wait
// and time-to-first-byte percentiles, answered requests and completion tokens
// per second. Measured here, so they do not lag like scraped gauges.
import type { TrafficClass } from './classes.js';

/** The window of every figure here (and of the upstream latency in latency-window.ts). */
export const WINDOW_MS = 60_000;
export const MAX_SAMPLES = 4096;

/** Capacity a ring starts with; it doubles as samples arrive, up to MAX_SAMPLES. */
const INITIAL_SAMPLES = 64;

/**
 * A bounded ring of (time, value) samples. It grows on demand: an upstream
 * that sees little traffic (most of a large fleet, most classes) holds a few
 * hundred bytes, not the 64 KiB a full ring takes.
 */
export class SampleRing {
  private t = new Float64Array(INITIAL_SAMPLES);
  private v = new Float64Array(INITIAL_SAMPLES);
  private next = 0;
  private size = 0;

  /** Samples held (at most MAX_SAMPLES). */
  get length(): number {
    return this.size;
  }

  /** Bytes the ring's arrays hold now. */
  get capacityBytes(): number {
    return this.t.byteLength + this.v.byteLength;
  }

  push(at: number, value: number): void {
    if (this.size === this.t.length && this.t.length < MAX_SAMPLES) this.grow();
    const cap = this.t.length;
    this.t[this.next] = at;
    this.v[this.next] = value;
    this.next = (this.next + 1) % cap;
    if (this.size < cap) this.size++;
  }

  /** Values no older than `since`, newest first. */
  valuesSince(since: number): number[] {
    const cap = this.t.length;
    const out: number[] = [];
    for (let i = 0; i < this.size; i++) {
      const idx = (this.next - 1 - i + cap) % cap;
      if (this.t[idx]! < since) break;
      out.push(this.v[idx]!);
    }
    return out;
  }

  /** Doubles the capacity, oldest sample first in the new arrays (the ring is full when this runs). */
  private grow(): void {
    const cap = Math.min(MAX_SAMPLES, this.t.length * 2);
    const t = new Float64Array(cap);
    const v = new Float64Array(cap);
    for (let i = 0; i < this.size; i++) {
      const idx = (this.next + i) % this.t.length;
      t[i] = this.t[idx]!;
      v[i] = this.v[idx]!;
    }
    this.t = t;
    this.v = v;
    this.next = this.size;
  }
}

export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export interface ClassWindowFigures {
  waitP50Ms: number | null;
  waitP95Ms: number | null;
  ttftP50Ms: number | null;
  ttftP95Ms: number | null;
  requestsPerS: number;
  tokensOutPerS: number;
  completed: number;
  rejected: number;
}

export class ClassStats {
  private readonly waits = new SampleRing();
  private readonly ttfts = new SampleRing();
  private readonly done = new SampleRing();
  private completedTotal = 0;
  private rejectedTotal = 0;
  private readonly startedAt: number;

  constructor(now: number) {
    this.startedAt = now;
  }

  recordWait(at: number, ms: number): void {
    this.waits.push(at, ms);
  }

  recordTtft(at: number, ms: number): void {
    this.ttfts.push(at, ms);
  }

  recordDone(at: number, tokensOut: number | null): void {
    this.completedTotal++;
    this.done.push(at, tokensOut ?? 0);
  }

  recordRejected(): void {
    this.rejectedTotal++;
  }

  figures(now: number): ClassWindowFigures {
    const since = now - WINDOW_MS;
    const waits = this.waits.valuesSince(since).sort((a, b) => a - b);
    const ttfts = this.ttfts.valuesSince(since).sort((a, b) => a - b);
    const done = this.done.valuesSince(since);
    const spanS = Math.max(1, Math.min(WINDOW_MS, now - this.startedAt)) / 1000;
    const round = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10);
    return {
      waitP50Ms: round(percentile(waits, 50)),
      waitP95Ms: round(percentile(waits, 95)),
      ttftP50Ms: round(percentile(ttfts, 50)),
      ttftP95Ms: round(percentile(ttfts, 95)),
      requestsPerS: Math.round((done.length / spanS) * 100) / 100,
      tokensOutPerS: Math.round((done.reduce((a, b) => a + b, 0) / spanS) * 10) / 10,
      completed: this.completedTotal,
      rejected: this.rejectedTotal,
    };
  }
}

export type UpstreamStats = Record<TrafficClass, ClassStats>;
