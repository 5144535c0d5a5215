// Per GPU: the processes holding its memory, and the configured service each
// belongs to — or "not a configured service" with why.
import type { HostView } from '../../../../src-preload/contract/index.js';
import { useSharedNow } from '../../components/use-now.js';
import { formatAgo } from '../../format/format.js';
import { processRows } from './host-health-view.js';

export function GpuProcessTable({ host }: { readonly host: Pick<HostView, 'gpus' | 'gpuProcesses'> }): React.JSX.Element {
  const now = useSharedNow();
  const rows = processRows(host);
  const at = host.gpuProcesses?.atMs ?? null;
  return (
    <section className="health-panel" aria-labelledby="gpu-processes-title" data-testid="gpu-processes">
      <h3 id="gpu-processes-title" className="health-panel__title">
        GPU processes
        {at !== null ? <span className="muted health-panel__meta"> · read {formatAgo(at, now)}</span> : null}
      </h3>
      {rows === null ? (
        <p className="muted">Not read yet: the GPU process list is read every few polls.</p>
      ) : rows.length === 0 ? (
        <p className="muted">No process holds GPU memory.</p>
      ) : (
        <table className="data-table health-table" data-testid="gpu-process-table">
          <caption className="visually-hidden">Processes holding GPU memory</caption>
          <thead>
            <tr>
              <th scope="col" className="col-idx">GPU</th>
              <th scope="col" className="col-num">PID</th>
              <th scope="col">Process</th>
              <th scope="col">User</th>
              <th scope="col" className="col-num">GPU memory</th>
              <th scope="col">Service</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.key} data-testid="gpu-process-row" data-service={r.matched ? r.service : ''} data-pid={r.pid}>
                <td className="col-idx num">{r.gpu}</td>
                <td className="col-num num">{r.pid}</td>
                <td>
                  <code>{r.name}</code>
                </td>
                <td>{r.user}</td>
                <td className="col-num num">{r.memory}</td>
                <td className={r.matched ? undefined : 'text-warn'}>{r.matched ? r.service : <strong>⚠ {r.service}</strong>}</td>
                <td className="muted health-table__why">{r.why}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
