// A tunnel's private socket changes hands when SSH reconnects on the openssh
// transport (ssh/master-forward.ts): the console's listener lets the path go
// and the new ControlMaster binds it, tens of milliseconds later. A request
// released from its hold by that very reconnect meets the gap — no socket
// (ENOENT), or a file nobody listens on yet (ECONNREFUSED) — before a byte is
// sent, so it is sent again shortly instead of failing upstream_unreachable.

/** How many times, and how far apart (ms): about a second, which an `ssh -O forward` takes even on a loaded machine. */
export const HANDOVER_TRIES = 10;
export const HANDOVER_WAIT_MS = 100;

/** The connect to a Unix socket failed before anything was written: no socket file, or no listener on it. */
export function isSocketHandover(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ECONNREFUSED';
}
