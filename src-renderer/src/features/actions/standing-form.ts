// The standing-approval form's rules, kept out of the component so they can be
// tested: a known service, a kind its driver supports, 1–24 hours, and for the
// destructive kinds (restart, offload) the host label typed exactly — the same
// rules the main process enforces (it refuses with LIFECYCLE_LABEL_MISMATCH).
import type { ActionKind, LifecycleTarget } from '../../../../src-preload/contract/index.js';
import { formatTime } from '../../format/format.js';

export const STANDING_MAX_HOURS = 24;
export const DESTRUCTIVE_KINDS: ReadonlySet<ActionKind> = new Set<ActionKind>(['restart', 'offload']);

export interface StandingDraft {
  upstream: string;
  kind: ActionKind | '';
  hours: string;
  typedLabel: string;
}

export const EMPTY_STANDING: StandingDraft = { upstream: '', kind: '', hours: '8', typedLabel: '' };

export type StandingCheck =
  | { ok: true; input: { upstream: string; kind: ActionKind; durationMinutes: number; typedLabel?: string }; summary: string; target: LifecycleTarget }
  | { ok: false; problems: string[] };

export function checkStanding(d: StandingDraft, targets: readonly LifecycleTarget[], now: number): StandingCheck {
  const problems: string[] = [];
  const target = targets.find((t) => t.upstream === d.upstream);
  if (!target) problems.push('Choose a service.');
  if (d.kind === '') problems.push('Choose an action kind.');
  else if (target && !target.supported.includes(d.kind)) problems.push(`The ${target.driver} driver of ${target.upstream} cannot ${d.kind}.`);
  const hours = Number(d.hours.trim());
  if (d.hours.trim() === '' || !Number.isInteger(hours) || hours < 1 || hours > STANDING_MAX_HOURS) problems.push(`Duration must be a whole number of hours from 1 to ${STANDING_MAX_HOURS}.`);
  const destructive = d.kind !== '' && DESTRUCTIVE_KINDS.has(d.kind);
  if (target && destructive && d.typedLabel !== target.label) problems.push(`Type the host label "${target.label}" to pre-approve a ${d.kind}.`);
  if (problems.length > 0 || !target || d.kind === '') return { ok: false, problems };
  const until = now + hours * 3_600_000;
  return {
    ok: true,
    target,
    input: { upstream: target.upstream, kind: d.kind, durationMinutes: hours * 60, ...(destructive ? { typedLabel: d.typedLabel } : {}) },
    summary: `${d.kind} of ${target.upstream} will run without asking whenever it is proposed, for the next ${hours} h (until ${formatTime(until, { nowMs: now })}). Each use is audited; you can revoke it at any time.`,
  };
}

/** "expires in 7 h 59 min", "expired", "revoked". */
export function standingStatus(s: { expiresAt: number; revokedAt: number | null }, now: number): string {
  if (s.revokedAt !== null) return 'revoked';
  const left = s.expiresAt - now;
  if (left <= 0) return 'expired';
  const min = Math.ceil(left / 60_000);
  return min >= 60 ? `expires in ${Math.floor(min / 60)} h ${min % 60} min` : `expires in ${min} min`;
}
