// What one simulated vLLM process has served, in the shape its /metrics
// exposes. A restart makes a new process and so a fresh EngineMetrics.

export const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560,
];
export const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
export const REQUEST_LATENCY_BUCKETS = [
  0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680,
];

export class Histogram {
  readonly counts: number[];
  count = 0;
  sum = 0;

  constructor(readonly buckets: readonly number[]) {
    this.counts = buckets.map(() => 0);
  }

  observe(value: number): void {
    this.count += 1;
    this.sum += value;
    for (let i = 0; i < this.buckets.length; i++) {
      if (value <= this.buckets[i]!) this.counts[i]! += 1;
    }
  }
}

export type FinishReason = 'stop' | 'length' | 'abort';

export class EngineMetrics {
  readonly createdAtSec: number;
  promptTokens = 0;
  generationTokens = 0;
  preemptions = 0;
  prefixCacheQueries = 0;
  prefixCacheHits = 0;
  readonly requestSuccess: Record<FinishReason, number> = { stop: 0, length: 0, abort: 0 };
  readonly ttft = new Histogram(TTFT_BUCKETS);
  readonly interTokenLatency = new Histogram(ITL_BUCKETS);
  readonly e2eLatency = new Histogram(REQUEST_LATENCY_BUCKETS);
  readonly queueTime = new Histogram(REQUEST_LATENCY_BUCKETS);

  constructor(nowMs: number) {
    this.createdAtSec = nowMs / 1000;
  }
}
