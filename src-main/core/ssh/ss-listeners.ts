// Listening sockets as `ss -ltn[p][H]` prints them on a host, and the
// processes it names on each: read by the fleet's host health (which process
// holds a service's port) and by lifecycle's restart check (a ghost left on
// the port). One parser for both, so the two can never disagree on a line.

export interface ListenerRow {
  readonly address: string;
  readonly port: number;
  /** Processes ss showed on it (none when it shows them only to root). */
  readonly holders: readonly { pid: number; name: string }[];
}

const SS_USER = /\("((?:[^"\\]|\\.)*)",pid=(\d+),fd=\d+\)/g;

/** `ss -ltn[p][H]` lines (with or without the Netid column; header lines skipped) → every listener with the processes shown. */
export function parseListeners(lines: readonly string[]): ListenerRow[] {
  const out: ListenerRow[] = [];
  for (const line of lines) {
    const f = line.trim().split(/\s+/);
    const at = f[0] === 'LISTEN' ? 3 : f[1] === 'LISTEN' ? 4 : -1;
    const local = at >= 0 ? f[at] : undefined;
    if (!local) continue;
    const colon = local.lastIndexOf(':');
    const port = Number(local.slice(colon + 1));
    if (!Number.isInteger(port)) continue;
    const holders = new Map<number, { pid: number; name: string }>();
    for (const m of line.matchAll(SS_USER)) holders.set(Number(m[2]), { pid: Number(m[2]), name: m[1]!.replace(/\\(.)/g, '$1') });
    out.push({ address: local.slice(0, colon), port, holders: [...holders.values()] });
  }
  return out;
}
