// The on-prem rule (field notes §3): the console calls upstreams only through
// its own SSH tunnels or on loopback. A tunnel's client (core/upstream) is on
// this machine by construction; a client of a configured URL asks the app's one
// OffPremCounter once, when it is made; a refusal is counted by purpose, and the
// counts go to /metrics and to the evidence report.
import { AppError, OnPremErrorCode } from './errors.js';

/** What an outbound call was for: forwarding a client request, a lifecycle change, a health probe. */
export type OffPremPurpose = 'proxy' | 'lifecycle' | 'probe';
export const OFF_PREM_PURPOSES: readonly OffPremPurpose[] = ['proxy', 'lifecycle', 'probe'];
export type OffPremCounts = Record<OffPremPurpose, number>;

/**
 * 127.0.0.0/8, ::1 or localhost: the console's own machine (its tunnels' public ports listen there).
 * The same rule as config's isLoopbackUrl (lifecycle.routerBaseUrl), so a URL the config
 * check accepts is never refused at call time. The URL parser has already normalised
 * the host (`127.1`, `0x7f.0.0.1` → 127.0.0.1), and the host is what it connects to
 * (`http://a.example@127.0.0.1/` goes to 127.0.0.1). A tunnel's private end has no URL:
 * its client is bound to the socket, never to a name.
 */
export function isOnPremUrl(url: string | URL): boolean {
  let host: string;
  try {
    host = (typeof url === 'string' ? new URL(url) : url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === 'localhost' || host === '::1') return true;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return m !== null && m.slice(1).every((o) => Number(o) <= 255);
}

/** Where a URL points, for messages and evidence: scheme and host only (no user info, path or query, which may hold secrets). */
export function describeUrlTarget(url: string | URL): string {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'an unparsable URL';
  }
}

/** The check a call site makes before it connects. */
export interface OnPremGuard {
  /** True: the URL is on this machine, go ahead. False: counted as refused; the caller must not connect. */
  check(url: string | URL, purpose: OffPremPurpose): boolean;
}

/** Counts, per purpose, the calls refused because their URL was off this machine. One per app. */
export class OffPremCounter implements OnPremGuard {
  private readonly refused: OffPremCounts = { proxy: 0, lifecycle: 0, probe: 0 };

  check(url: string | URL, purpose: OffPremPurpose): boolean {
    if (isOnPremUrl(url)) return true;
    this.refused[purpose] += 1;
    return false;
  }

  /** Refusals since this counter was made, every purpose present (0 when none). */
  counts(): OffPremCounts {
    return { ...this.refused };
  }
}

/** The app's counter; made by the composition root and handed to each call site (no module global, so tests stay independent). */
export function createOffPremCounter(): OffPremCounter {
  return new OffPremCounter();
}

/** The error a call site throws (or reports) after `check` said no. */
export function offPremError(url: string | URL, purpose: OffPremPurpose): AppError {
  return new AppError(
    OnPremErrorCode.REFUSED,
    `refused a ${purpose} call to ${describeUrlTarget(url)}: the console calls upstreams only through its SSH tunnels or on this machine (127.0.0.1, ::1, localhost)`,
    { retryable: false, details: { purpose, target: describeUrlTarget(url) } },
  );
}
