// Display helpers of the Proxy view. Unknown is "—", never a made-up zero.
import type { UpstreamState } from '../../../../src-preload/contract/index.js';
import type { BadgeTone } from '../../components/badge-tone.js';
import { DASH } from '../../format/format.js';

export const UPSTREAM_STATE_TONE: Record<UpstreamState, BadgeTone> = { ready: 'ok', draining: 'warn', sleeping: 'info', down: 'error' };

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return DASH;
  if (ms >= 10_000) return `${(ms / 1000).toFixed(0)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(1)} ms`;
}

export function formatRate(value: number): string {
  if (value === 0) return '0';
  if (value >= 100) return value.toFixed(0);
  return value.toFixed(value >= 10 ? 1 : 2);
}


export function statusTone(status: number): 'ok' | 'warn' | 'error' | 'neutral' {
  if (status < 400) return 'ok';
  if (status === 429 || status === 499 || status === 503) return 'warn';
  return 'error';
}
