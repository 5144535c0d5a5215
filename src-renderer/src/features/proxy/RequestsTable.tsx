// Recent requests from the store, newest first: filterable by model, class and
// outcome, or found by a trace (the client's X-Request-Id or traceparent trace-id,
// or our own request id); windowed (only the rows in view are rendered) so
// thousands stay cheap.
import { useEffect, useMemo, useState } from 'react';
import type { RequestLogRetention, RequestRow, TrafficClass } from '../../../../src-preload/contract/index.js';
import { useAppStore, useServices } from '../../app/app-context.js';
import { Badge } from '../../components/Badge.js';
import { toContractError } from '../../transport/transport.js';
import { formatMs, statusTone } from './proxy-format.js';
import { formatTime, formatTimestamp } from '../../format/format.js';

const ROW_PX = 26;
const VIEW_PX = 390;
const OVERSCAN = 8;
const LIMIT = 2000;

export function RequestsTable(): React.JSX.Element {
  const { transport } = useServices();
  const answered = useAppStore((s) => s.proxy.stats?.answered ?? 0);
  const models = useAppStore((s) => s.proxy.stats?.upstreams.map((u) => u.model).join('\n') ?? '');
  // Rows the log could not write (full data folder): counted, never silent.
  const dropped = useAppStore((s) => s.proxy.stats?.requestLog?.dropped ?? null);
  const waiting = useAppStore((s) => s.proxy.stats?.requestLog?.pending ?? 0);
  const failingSince = useAppStore((s) => s.proxy.stats?.requestLog?.failingSince ?? null);
  const [rows, setRows] = useState<RequestRow[]>([]);
  const [retention, setRetention] = useState<RequestLogRetention | null>(null);
  const [model, setModel] = useState('');
  const [cls, setCls] = useState<TrafficClass | ''>('');
  const [outcome, setOutcome] = useState<'all' | 'ok' | 'error'>('all');
  // What is typed, and the trace searched for (on Enter or leaving the field: one query, not one a keystroke).
  const [traceInput, setTraceInput] = useState('');
  const [trace, setTrace] = useState('');
  // A link from another view (the playground's answer) asks for one request: search its id, once.
  const requestFocus = useAppStore((s) => s.requestFocus);
  const takeRequestFocus = useAppStore((s) => s.takeRequestFocus);
  useEffect(() => {
    const id = takeRequestFocus();
    if (id === null) return;
    setTraceInput(id);
    setTrace(id);
  }, [requestFocus, takeRequestFocus]);
  const [error, setError] = useState<string | null>(null);
  const [scrollTop, setScrollTop] = useState(0);

  // Re-read when the answered count moves (one stats event a second) or a filter changes.
  useEffect(() => {
    let cancelled = false;
    transport
      .invoke('proxy.requests', { limit: LIMIT, outcome, ...(model ? { model } : {}), ...(cls ? { class: cls } : {}), ...(trace ? { trace } : {}) })
      .then(
        (out) => {
          if (!cancelled) {
            setRows(out.rows);
            setRetention(out.retention);
            setError(null);
          }
        },
        (err: unknown) => {
          if (!cancelled) setError(toContractError(err).message);
        },
      );
    return () => {
      cancelled = true;
    };
  }, [transport, answered, model, cls, outcome, trace]);

  const modelList = useMemo(() => (models ? models.split('\n') : []), [models]);
  const first = Math.max(0, Math.floor(scrollTop / ROW_PX) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + VIEW_PX) / ROW_PX) + OVERSCAN);
  const visible = rows.slice(first, last);

  return (
    <section className="panel requests-panel" aria-label="Recent requests" data-testid="requests-panel">
      <div className="requests-panel__head">
        <h3 className="panel__title">Recent requests</h3>
        <div className="requests-filters">
          <select aria-label="Model" value={model} onChange={(e) => setModel(e.target.value)} data-testid="filter-model">
            <option value="">all models</option>
            {modelList.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
          <select aria-label="Class" value={cls} onChange={(e) => setCls(e.target.value as TrafficClass | '')} data-testid="filter-class">
            <option value="">all classes</option>
            <option value="interactive">interactive</option>
            <option value="system">system</option>
            <option value="batch">batch</option>
          </select>
          <select aria-label="Outcome" value={outcome} onChange={(e) => setOutcome(e.target.value as 'all' | 'ok' | 'error')} data-testid="filter-outcome">
            <option value="all">all outcomes</option>
            <option value="ok">ok</option>
            <option value="error">errors</option>
          </select>
          <input
            type="search"
            aria-label="Trace or request id"
            placeholder="trace / request id"
            value={traceInput}
            maxLength={128}
            onChange={(e) => {
              setTraceInput(e.target.value);
              if (e.target.value === '') setTrace('');
            }}
            onKeyDown={(e) => {
              if (e.key === 'Enter') setTrace(traceInput.trim());
            }}
            onBlur={() => setTrace(traceInput.trim())}
            data-testid="filter-trace"
          />
          <span className="muted" data-testid="requests-count" data-value={rows.length}>
            {rows.length === LIMIT ? `latest ${LIMIT}` : `${rows.length} rows`}
          </span>
        </div>
      </div>
      {error ? <p className="inline-error">{error}</p> : null}
      <div className="requests-grid requests-grid--head">
        <span>Time</span>
        <span>Trace</span>
        <span>Client</span>
        <span>Class</span>
        <span>Model</span>
        <span>Status</span>
        <span className="num">Queue</span>
        <span className="num">TTFT</span>
        <span className="num">Total</span>
        <span className="num">Tok in/out</span>
      </div>
      <div className="requests-scroll" style={{ height: VIEW_PX }} onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)} data-testid="requests-scroll">
        {rows.length === 0 ? (
          <p className="muted panel__empty" data-testid="requests-empty">
            {trace ? `No request with trace ${trace} in the log.` : 'No requests in the log yet: requests sent to the proxy appear here as they finish.'}
          </p>
        ) : null}
        <div style={{ height: rows.length * ROW_PX, position: 'relative' }}>
          {visible.map((r, i) => (
            <div
              key={r.seq}
              className="requests-grid requests-grid--row"
              style={{ top: (first + i) * ROW_PX, height: ROW_PX }}
              data-testid="request-row"
              data-request-id={r.id}
              data-trace-id={r.traceId ?? r.id}
              title={`${r.id}${r.traceId !== null ? ` · trace ${r.traceId}` : ''} · ${r.endpoint}${r.upstream ? ` → ${r.upstream}` : ''}`}
            >
              <span className="muted num">{formatTime(r.ts)}</span>
              {/* The client's trace; without one, our own id is the trace (muted: the client did not name it). */}
              <span className={r.traceId !== null ? 'ellipsis code' : 'ellipsis code muted'} data-testid="request-trace">
                {r.traceId ?? r.id}
              </span>
              <span className="ellipsis">{r.client}</span>
              <span>{r.class ?? '—'}</span>
              <span className="ellipsis">{r.model ?? '—'}</span>
              <span>
                <Badge tone={statusTone(r.status)} value={String(r.status)}>
                  {r.status}
                  {r.errorCode ? ` ${r.errorCode}` : ''}
                </Badge>
              </span>
              <span className="num">{formatMs(r.queueMs)}</span>
              <span className="num">{formatMs(r.ttftMs)}</span>
              <span className="num">{formatMs(r.totalMs)}</span>
              <span className="num">
                {r.tokensIn ?? '—'} / {r.tokensOut ?? '—'}
              </span>
            </div>
          ))}
        </div>
      </div>
      {dropped !== null && (dropped > 0 || failingSince !== null) ? (
        <p className="inline-error" data-testid="requests-dropped">
          Request log: {dropped.toLocaleString()} rows dropped since start{waiting > 0 ? `, ${waiting.toLocaleString()} waiting to be written` : ''}
          {failingSince !== null ? ` · writes failing since ${formatTime(failingSince)} (the data folder is full or refuses writes)` : ''}.
        </p>
      ) : null}
      {retention ? (
        <p className="muted requests-retention" data-testid="requests-retention">
          Request log: {retention.rowsKept.toLocaleString()} rows kept
          {retention.oldestTs !== null ? `, oldest ${formatTimestamp(retention.oldestTs)}` : ''}.
          {retention.maxAgeDays !== null && retention.maxRows !== null
            ? ` Keeps ${retention.maxAgeDays} days and at most ${retention.maxRows.toLocaleString()} rows (config proxy.requestLog).`
            : ''}{' '}
          Requests without a valid token are counted in /metrics, not stored.
        </p>
      ) : null}
    </section>
  );
}
