// What the export panel says after the operator pressed Cancel. The call
// rejects at once (BRIDGE_CANCELLED), but the core stops only at its next step:
// "nothing was written" is shown once the export's own progress says it
// stopped (its last event), not before; one that had already finished is kept.
import type { ExportProgressState } from './report-format.js';

/**
 * - `stopping`: the console has not yet reported the end of the export;
 * - `cancelled`: it stopped (or never reached its first step): nothing was written;
 * - `finished`: it completed before the cancel reached it, and is kept;
 * - `unconfirmed`: no end was reported within the deadline.
 */
export type CancelView = 'stopping' | 'cancelled' | 'finished' | 'unconfirmed';

/** How long the panel waits for the core to report the end of a cancelled export before saying it cannot tell. */
export const CANCEL_CONFIRM_TIMEOUT_MS = 60_000;

export function cancelView(progress: ExportProgressState, timedOut: boolean): CancelView {
  const last = progress.last;
  // No event of this export had arrived: it had not started, or had only just
  // (its first steps are checks; nothing is written before the evidence is built).
  if (last === null) return 'cancelled';
  if (last.state === 'done') return 'finished';
  // A failed export removes its staging folder before its last event, whatever the cause.
  if (last.state === 'failed') return 'cancelled';
  return timedOut ? 'unconfirmed' : 'stopping';
}
