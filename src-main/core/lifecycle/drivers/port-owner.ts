// Who holds the service's port, before and after a restart (`ss -ltnp` over
// the session's exec). A process that still holds it afterwards is a ghost:
// the restart started nothing new, and /health would be answered by the old
// process. The console names it and stops; it never kills anything itself.
// No ss, or no pid (ss shows other users' processes only to root): said so in
// the verify lines, not a failure.
import { AppError, toAppError } from '../../base/index.js';
import { parseListeners } from '../../ssh/index.js';
import { LifecycleErrorCode } from '../errors.js';
import type { CheckOutcome, DriverCheck, DriverIo, LifecycleTargetConfig } from './types.js';

/** No filter expression: every ss since iproute2 4.x takes these flags; the port is picked out here. */
export const SS_COMMAND = 'ss -ltnp';

export interface PortHolder {
  pid: number;
  name: string;
}

export interface PortListing {
  listening: boolean;
  /** Distinct processes on the port; empty when ss did not show them (no permission). */
  holders: PortHolder[];
}

type Seen = { ok: true; listing: PortListing } | { ok: false; why: string };

/** Container runtimes' port proxies: the server's own process is behind them, so their pid says nothing about a restart. */
const RUNTIME_PROXIES = /^(docker-proxy|rootlesskit|rootlessport|slirp4netns|pasta|conmon|containerd-shim.*)$/;
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/i;
/** The listeners on `port` in `ss -ltn[p][H]` output, their holders once each (the one ss parser: ssh/ss-listeners.ts). */
export function parseSsListeners(stdout: string, port: number): PortListing {
  const rows = parseListeners(stdout.split('\n')).filter((l) => l.port === port);
  const holders = new Map<number, PortHolder>();
  for (const h of rows.flatMap((l) => l.holders)) if (!holders.has(h.pid)) holders.set(h.pid, { pid: h.pid, name: h.name });
  return { listening: rows.length > 0, holders: [...holders.values()] };
}

const named = (hs: readonly PortHolder[]) => hs.map((h) => `pid ${h.pid} (${h.name})`).join(', ');

async function listPort(io: DriverIo, target: LifecycleTargetConfig, timeoutMs: number): Promise<Seen> {
  if (!LOOPBACK.test(target.remoteHost)) return { ok: false, why: `the service is at ${target.remoteHost}, not on ${target.label} itself, so ss there cannot see its process` };
  if (!io.exec) return { ok: false, why: 'no SSH exec to run ss' };
  try {
    const r = await io.exec(SS_COMMAND, timeoutMs);
    const err = (r.stderr || r.stdout).trim().split('\n')[0] ?? '';
    if (r.exitCode === 127 || /command not found|No such file/i.test(err)) return { ok: false, why: `ss is not installed on ${target.label}` };
    if (r.exitCode !== 0) return { ok: false, why: `\`${SS_COMMAND}\` exited ${r.exitCode ?? r.signal}${err ? `: ${err.slice(0, 120)}` : ''}` };
    return { ok: true, listing: parseSsListeners(r.stdout, target.remotePort) };
  } catch (err) {
    return { ok: false, why: `could not run \`${SS_COMMAND}\` (${toAppError(err).message})` };
  }
}

export function ghostError(target: LifecycleTargetConfig, ghost: PortHolder): AppError {
  const port = target.remotePort;
  return new AppError(
    LifecycleErrorCode.GHOST_PROCESS,
    `pid ${ghost.pid} (${ghost.name}) still holds port ${port} on ${target.label} after the restart: the restart did not replace it (a ghost process squatting the port, answering in the new one's place). ` +
      `The console kills nothing: stop it yourself (\`sudo kill ${ghost.pid}\`, or \`sudo fuser -k ${port}/tcp\`), then propose the restart again`,
    { details: { pid: ghost.pid, process: ghost.name, port, host: target.label, hint: `sudo kill ${ghost.pid}` } },
  );
}

/**
 * The port check of a restart. The old pid may still be seen for `settleMs`
 * after the restart command (one that returns before the stop has ended);
 * after that it is a ghost.
 */
export function portOwnerCheck(target: LifecycleTargetConfig): DriverCheck {
  const port = target.remotePort;
  let before: Seen = { ok: false, why: 'not looked at before the restart' };
  return {
    name: 'port',
    text: `who listens on :${port} on ${target.label} (\`${SS_COMMAND}\`), before and after: the old process must be gone (one still holding the port fails the restart; the console never kills it)`,
    async before(io, timeoutMs) {
      before = await listPort(io, target, timeoutMs);
    },
    async run(io, t): Promise<CheckOutcome> {
      if (!before.ok) return { ok: true, line: `port: ${before.why}; old and new process not compared` };
      const was = before.listing;
      if (!was.listening) return { ok: true, line: `port: nothing listened on :${port} before the restart; nothing to compare` };
      if (was.holders.length === 0) {
        return { ok: true, line: `port: ss showed a listener on :${port} but not its process (ss shows other users' processes only to root); old and new process not compared` };
      }
      const proxy = was.holders.find((h) => RUNTIME_PROXIES.test(h.name));
      if (proxy) return { ok: true, line: `port: :${port} is held by ${named([proxy])}, the container runtime's port proxy; the server's own process is behind it, not compared` };
      const now = await listPort(io, target, t.timeoutMs);
      if (!now.ok) return { ok: true, line: `port: before the restart ${named(was.holders)}; after: ${now.why}; not compared` };
      if (!now.listing.listening) return { ok: false, line: `port: nothing listens on :${port} yet (before the restart: ${named(was.holders)})` };
      const ghost = now.listing.holders.find((h) => was.holders.some((w) => w.pid === h.pid));
      if (ghost) {
        if (t.sinceStepsMs < t.settleMs) return { ok: false, line: `port: ${named([ghost])} still holds :${port} right after the restart` };
        const fatal = ghostError(target, ghost);
        return { ok: false, line: `port: ghost — ${named([ghost])} still holds :${port} after the restart`, fatal };
      }
      if (now.listing.holders.length === 0) return { ok: true, line: `port: a listener on :${port} whose process ss does not show (before: ${named(was.holders)})` };
      return { ok: true, line: `port: :${port} was ${named(was.holders)}, now ${named(now.listing.holders)}` };
    },
  };
}
