// Per upstream and class: slots in use, queue depth, wait p50/p95, TTFT, throughput; caps edit.
import { useState } from 'react';
import type { UpstreamFigures } from '../../../../src-preload/contract/index.js';
import { useAppStore } from '../../app/app-context.js';
import { Badge } from '../../components/Badge.js';
import { MeterBar } from '../../components/MeterBar.js';
import { CapsDialog } from './CapsDialog.js';
import { formatMs, formatRate, UPSTREAM_STATE_TONE } from './proxy-format.js';

export function UpstreamTable(): React.JSX.Element {
  const upstreams = useAppStore((s) => s.proxy.stats?.upstreams ?? []);
  const [editing, setEditing] = useState<UpstreamFigures | null>(null);
  return (
    <section className="panel" aria-label="Upstream pools">
      <h3 className="panel__title">Pools per upstream and class</h3>
      {upstreams.length === 0 ? (
        <p className="muted panel__empty">No model services configured.</p>
      ) : (
        <table className="data-table pool-table">
          <thead>
            <tr>
              <th scope="col" className="col-upstream">Upstream</th>
              <th scope="col" className="col-class">Class</th>
              <th scope="col" className="col-num" title="Requests holding a slot / the class cap">
                In use / cap
              </th>
              <th scope="col" className="col-num">Queued</th>
              <th scope="col" className="col-num" title="Queue wait, last minute">
                Wait p50
              </th>
              <th scope="col" className="col-num">Wait p95</th>
              <th scope="col" className="col-num" title="Time to first byte, last minute">
                TTFT p50
              </th>
              <th scope="col" className="col-num" title="Answered requests per second, last minute">
                Req/s
              </th>
              <th scope="col" className="col-num" title="Completion tokens per second, last minute">
                Tok/s
              </th>
              <th scope="col" className="col-num">429/503</th>
            </tr>
          </thead>
          {upstreams.map((u) => (
            <tbody key={u.upstream} data-testid={`pool-${u.upstream}`}>
              {u.classes.map((c, i) => (
                <tr key={c.class} data-testid={`pool-${u.upstream}-${c.class}`} className={i === 0 ? 'pool-table__first' : undefined}>
                  {i === 0 ? (
                    <td rowSpan={u.classes.length} className="pool-upstream">
                      <div className="pool-upstream__head">
                        <span className="pool-upstream__name" title={u.model}>
                          {u.model}
                        </span>
                        <Badge tone={UPSTREAM_STATE_TONE[u.state]} testId="pool-state" value={u.state}>
                          {u.state}
                        </Badge>
                      </div>
                      <div className="service-model__meta">
                        <span className="muted">{u.upstream}</span>
                        {u.aliases.map((a) => (
                          <span key={a} className="alias">
                            {a}
                          </span>
                        ))}
                      </div>
                      <div className="pool-upstream__slots">
                        <MeterBar pct={(u.inFlight / Math.max(1, u.slots)) * 100} text={`${u.inFlight}/${u.slots}`} label="Slots in use" testId="pool-slots" value={u.inFlight} />
                        <span className="muted pool-upstream__caps" data-testid="pool-caps" title="Slots reserved for interactive · mean service time the ETAs use">
                          rsv {u.caps.reservedInteractive} · svc {formatMs(u.serviceMsEstimate)}
                        </span>
                        <button type="button" className="button button--ghost button--small" onClick={() => setEditing(u)} data-testid={`edit-caps-${u.upstream}`}>
                          Caps…
                        </button>
                      </div>
                    </td>
                  ) : null}
                  <td className="pool-class">{c.class}</td>
                  <td className="col-num num" data-testid="class-inflight" data-value={c.inFlight}>
                    {c.inFlight} <span className="muted">/ {u.caps[c.class]}</span>
                  </td>
                  <td className={`col-num num${c.queued ? ' text-warn' : ''}`} data-testid="class-queued" data-value={c.queued}>
                    {c.queued}
                  </td>
                  <td className="col-num num" data-testid="class-wait-p50">
                    {formatMs(c.waitP50Ms)}
                  </td>
                  <td className="col-num num" data-testid="class-wait-p95">
                    {formatMs(c.waitP95Ms)}
                  </td>
                  <td className="col-num num">{formatMs(c.ttftP50Ms)}</td>
                  <td className="col-num num" data-testid="class-rps" data-value={c.requestsPerS}>
                    {formatRate(c.requestsPerS)}
                  </td>
                  <td className="col-num num">{formatRate(c.tokensOutPerS)}</td>
                  <td className={`col-num num${c.rejected ? ' text-warn' : ''}`}>{c.rejected}</td>
                </tr>
              ))}
            </tbody>
          ))}
        </table>
      )}
      {editing ? <CapsDialog upstream={editing} onClose={() => setEditing(null)} /> : null}
    </section>
  );
}
