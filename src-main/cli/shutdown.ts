// How `serve` stops on a signal, and what it tells the operator meanwhile.
// The first SIGTERM / Ctrl-C: stop taking work, let requests in flight finish
// for up to the proxy's shutdownGraceMs, abort running lifecycle actions
// (cancelled, never resumed), close tunnels and sessions, flush
// and close the database; all within SHUTDOWN_DEADLINE_MS, else exit 1 anyway.
// While it waits it says on what, once a second. A second signal ends the
// process at once: better-sqlite3 writes are synchronous, so no transaction is
// half-done when a signal handler runs; the database is closed (its WAL
// checkpointed) before exit where it can be, and SQLite's WAL recovery covers
// the case where it cannot.
import { readdirSync, readFileSync } from 'node:fs';
import type { App } from '../core/app.js';

/** The longest a SIGTERM'd console takes to exit: the proxy's grace (default 5 s) plus closing tunnels, sessions and the store. */
export const SHUTDOWN_DEADLINE_MS = 10_000;
/** How often a stopping console says what it still waits for. */
export const WAITING_LINE_EVERY_MS = 1_000;

export interface PendingWork {
  inFlight: number;
  queued: number;
  /** `label/service N` for each upstream with requests running or waiting. */
  upstreams: string[];
  /** `restart of label/service` for each lifecycle action running. */
  actions: string[];
}

/** What the console is still doing; null once it cannot tell (the store is closed). */
export function pendingWork(app: App): PendingWork | null {
  try {
    const stats = app.proxy.snapshot();
    const upstreams = stats.upstreams.filter((u) => u.inFlight + u.queued > 0).map((u) => `${u.upstream} ${u.inFlight + u.queued}`);
    const actions = app.store.isOpen
      ? app.lifecycle
          .list(50)
          .actions.filter((a) => a.state === 'running' || a.state === 'approved')
          .map((a) => `${a.kind} of ${a.upstream}`)
      : [];
    return { inFlight: stats.inFlight, queued: stats.queued, upstreams, actions };
  } catch {
    return null;
  }
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** "waiting for 2 requests in flight (l20-poc/qwen 2), action restart of tri-gpu/embed…", or null when nothing is pending. */
export function waitingLine(p: PendingWork | null): string | null {
  if (p === null) return null;
  const parts: string[] = [];
  if (p.inFlight + p.queued > 0) {
    const queued = p.queued > 0 ? `, ${p.queued} queued` : '';
    parts.push(`${plural(p.inFlight, 'request')} in flight${queued} (${p.upstreams.join(', ')})`);
  }
  if (p.actions.length > 0) parts.push(`${p.actions.length === 1 ? 'action' : 'actions'} ${p.actions.join(', ')} (cancelled, never resumed)`);
  return parts.length > 0 ? `waiting for ${parts.join('; ')}…` : null;
}

export interface ShutdownSteps {
  /** The graceful path: bridge, API, core, demo fleet, ready files, in that order. */
  graceful(): Promise<void>;
  /** A second signal: what can be closed synchronously (the database), then the process ends. */
  immediate(): void;
  pending(): PendingWork | null;
  graceMs: number;
  say(line: string): void;
  exit(code: number): void;
}

/** Signals this soon after the first are the same keypress delivered twice (terminal + parent), not a second request. */
export const SAME_KEYPRESS_MS = 1_000;

/**
 * A signal handler for serve: the first signal starts the graceful stop (resolving `onStopped` with the
 * exit code), a later one (past SAME_KEYPRESS_MS) ends the process at once.
 */
export function createSignalHandler(steps: ShutdownSteps, onStopped: (code: number) => void, now: () => number = Date.now): (signal: string) => void {
  let stoppingAt: number | null = null;
  return (signal) => {
    if (stoppingAt !== null) {
      // One Ctrl-C can arrive more than once: the terminal signals the whole process group, and a
      // parent (`npm start`, npm itself) forwards it again. Only a later one means "exit now".
      if (now() - stoppingAt < SAME_KEYPRESS_MS) return;
      const left = waitingLine(steps.pending());
      steps.say(`${signal} again, exiting now${left ? `; not finished: ${left.replace(/^waiting for /, '').replace(/…$/, '')}` : ''}`);
      steps.immediate();
      steps.exit(1);
      return;
    }
    stoppingAt = now();
    const first = waitingLine(steps.pending());
    steps.say(
      `${signal}: stopping; requests in flight get up to ${(steps.graceMs / 1000).toFixed(1)} s, the console exits within ${SHUTDOWN_DEADLINE_MS / 1000} s; ` +
        `a second signal exits at once${first ? `; ${first}` : ''}`,
    );
    let last = first;
    const progress = setInterval(() => {
      last = waitingLine(steps.pending());
      if (last !== null) steps.say(last);
    }, WAITING_LINE_EVERY_MS);
    progress.unref();
    const deadline = setTimeout(() => {
      steps.say(`shutdown took longer than ${SHUTDOWN_DEADLINE_MS / 1000} s, exiting${last ? `; ${last.replace(/…$/, '')}` : ''}`);
      steps.immediate();
      steps.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    const started = now();
    steps.graceful().then(
      () => {
        clearInterval(progress);
        clearTimeout(deadline);
        steps.say(`stopped in ${((now() - started) / 1000).toFixed(1)} s`);
        onStopped(0);
      },
      (err: unknown) => {
        clearInterval(progress);
        clearTimeout(deadline);
        steps.say(`error during shutdown: ${(err as Error).message}`);
        onStopped(1);
      },
    );
  };
}

/**
 * SIGTERM to this process's own children (ssh masters, shells, a PDF printer): a process that exits at once
 * must not leave them holding connections. Linux reads them from /proc; elsewhere this does nothing (the
 * next start ends a master it finds on its control socket).
 */
export function endChildProcesses(): number {
  let ended = 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== process.pid) continue;
      process.kill(Number(entry), 'SIGTERM');
      ended++;
    } catch {
      // exited meanwhile, or not ours to signal
    }
  }
  return ended;
}
