// GPU faults (issue #29 item 4): ECC counts, retired pages, active throttle
// reasons with how long a slowdown has lasted, AMD's critical temperature and
// RAS counts, and the kernel log's Xid events — or why the log cannot be read
// and what would allow it. Each part says "not read yet" until the core has it.
import type { HostView } from '../../../../src-preload/contract/index.js';
import { useSharedNow } from '../../components/use-now.js';
import { formatAgo, formatTime } from '../../format/format.js';
import { faultRows, kernelLogStatus } from './host-health-view.js';

export function GpuFaultsPanel({ host }: { readonly host: Pick<HostView, 'gpus' | 'health'> }): React.JSX.Element {
  const now = useSharedNow();
  const rows = faultRows(host, now);
  const kernelLog = host.health?.kernelLog;
  const log = kernelLogStatus(kernelLog);
  const at = host.health?.faultsAtMs ?? null;
  const issues = host.health?.faultIssues ?? [];
  const amd = rows?.some((r) => r.critical !== '—' || r.ras !== '—') ?? false;
  return (
    <section className="health-panel" aria-labelledby="gpu-faults-title" data-testid="gpu-faults">
      <h3 id="gpu-faults-title" className="health-panel__title">
        GPU faults
        {at !== null ? <span className="muted health-panel__meta"> · read {formatAgo(at, now)}</span> : null}
      </h3>
      {rows === null ? (
        <p className="muted" data-testid="faults-not-read">ECC, retired pages and throttle reasons: not read yet.</p>
      ) : (
        <table className="data-table health-table" data-testid="gpu-faults-table">
          <caption className="visually-hidden">GPU fault figures</caption>
          <thead>
            <tr>
              <th scope="col" className="col-idx">GPU</th>
              <th scope="col">ECC errors (volatile)</th>
              <th scope="col">Retired pages</th>
              <th scope="col">Throttle reasons</th>
              {amd ? <th scope="col">Critical temp</th> : null}
              {amd ? <th scope="col">RAS errors</th> : null}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.gpu} data-testid="gpu-fault-row" title={r.source}>
                <td className="col-idx num">{r.gpu}</td>
                <td className={`num${r.eccBad ? ' text-warn' : ''}`}>{r.ecc}</td>
                <td className={`num${r.retiredPending ? ' text-warn' : ''}`}>{r.retired}</td>
                <td className={r.slowdown ? 'text-warn' : undefined}>{r.slowdown ? <strong>⚠ {r.throttle}</strong> : r.throttle}</td>
                {amd ? <td className="num">{r.critical}</td> : null}
                {amd ? <td className="num">{r.ras}</td> : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {issues.length > 0 ? (
        <ul className="health-panel__issues">
          {issues.map((i) => (
            <li key={i} className="text-warn">
              {i}
            </li>
          ))}
        </ul>
      ) : null}
      <p className={log.readable === false ? 'text-warn' : 'muted'} data-testid="kernel-log-status">
        {log.text}
      </p>
      {kernelLog && kernelLog.xids.length > 0 ? (
        <ul className="xid-list" data-testid="xid-list">
          {[...kernelLog.xids].reverse().map((x, i) => (
            <li key={`${x.atMs}-${i}`}>
              <time dateTime={new Date(x.atMs).toISOString()}>{formatTime(x.atMs, { nowMs: now })}</time> <strong>Xid {x.xid}</strong> GPU {x.gpuIndex ?? x.pciBusId ?? '—'}
              {x.pid !== null ? ` · PID ${x.pid}` : ''} <code className="xid-list__text">{x.text}</code>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
