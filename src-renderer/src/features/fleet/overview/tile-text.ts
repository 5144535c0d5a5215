// The tile's tone and glyph (each tone its own shape, so colour is never the
// only signal) and the rule for text too long for a tile.
import type { BadgeTone } from '../../../components/badge-tone.js';
import { TROUBLE_RANK } from './host-trouble.js';
import type { OverviewRow } from './overview-row.js';

export type TileTone = Extract<BadgeTone, 'ok' | 'warn' | 'error' | 'neutral'>;

export const TONE_GLYPH: Record<TileTone, string> = { ok: '●', warn: '▲', error: '✕', neutral: '◌' };

export function tileTone(row: OverviewRow): TileTone {
  if (row.troubles.length === 0) return row.state === 'connected' ? 'ok' : 'neutral';
  const worst = row.troubles[0]!.kind;
  if (TROUBLE_RANK[worst] <= TROUBLE_RANK['alert-critical'] && worst !== 'stale') return 'error';
  if (worst === 'connecting' || worst === 'loading') return 'neutral';
  return 'warn';
}

/** At most `max` characters, cut at a word where one is near, with "…" when cut: said, not clipped by the layout. */
export function shortText(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const head = chars.slice(0, max - 1).join('');
  const space = head.lastIndexOf(' ');
  return `${space > max * 0.6 ? head.slice(0, space) : head}…`;
}
