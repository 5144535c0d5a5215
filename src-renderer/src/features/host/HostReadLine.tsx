// How the console reads this host's telemetry (issue #31): one collector
// command a poll, or through the tunnels with the reason; a host clock off by
// minutes is said here (the figures keep the console's time).
import type { HostReadView } from '../../../../src-preload/contract/index.js';

function skewText(s: number): string {
  const abs = Math.abs(s);
  const amount = abs >= 120 ? `${Math.round(abs / 60)} min` : `${abs} s`;
  return `host clock ${amount} ${s > 0 ? 'ahead of' : 'behind'} the console's`;
}

export function HostReadLine({ read }: { read: HostReadView | undefined }): React.JSX.Element | null {
  if (!read) return null;
  const text =
    read.mode === 'collector' ? `read by one command a poll${read.reason ? ` (${read.reason})` : ''}` : read.mode === 'tunnels' ? `read through tunnels${read.reason ? `: ${read.reason}` : ''}` : 'read through tunnels until the host is probed';
  return (
    <p className="muted small" data-testid="host-read" data-mode={read.mode}>
      Telemetry: {text}
      {read.clockSkewS !== null ? ` · ${skewText(read.clockSkewS)}` : ''}
    </p>
  );
}
