// Captured requests (config proxy.capture): whether capture is on and for
// what, the captures kept (sizes only), and one capture's bodies on demand —
// opening one is recorded in the audit log before the core answers.
import { useCallback, useEffect, useState } from 'react';
import type { CaptureBody, CaptureDetail, CaptureStatus, CaptureSummary } from '../../../../src-preload/contract/index.js';
import { useAppStore, useServices } from '../../app/app-context.js';
import { Badge } from '../../components/Badge.js';
import { CopyButton } from '../../components/CopyButton.js';
import { formatTime } from '../../format/format.js';
import { toContractError } from '../../transport/transport.js';
import { bodySizeLabel, bodyWithoutText, captureKeptLine, captureStatusLine } from './capture-lines.js';
import { statusTone } from './proxy-format.js';

const LIMIT = 100;

export function CapturesPanel(): React.JSX.Element {
  const { transport } = useServices();
  const answered = useAppStore((s) => s.proxy.stats?.answered ?? 0);
  const [status, setStatus] = useState<CaptureStatus | null>(null);
  const [captures, setCaptures] = useState<CaptureSummary[]>([]);
  const [open, setOpen] = useState<CaptureDetail | null>(null);
  const [error, setError] = useState<string | null>(null);

  // Re-read when the answered count moves (one stats event a second): a new failure may have been kept.
  useEffect(() => {
    let cancelled = false;
    Promise.all([transport.invoke('proxy.captureStatus', {}), transport.invoke('proxy.listCaptures', { limit: LIMIT })]).then(
      ([s, list]) => {
        if (cancelled) return;
        setStatus(s);
        setCaptures(list.captures);
        setError(null);
      },
      (err: unknown) => {
        if (!cancelled) setError(toContractError(err).message);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [transport, answered]);

  const show = useCallback(
    (id: number) => {
      transport.invoke('proxy.showCapture', { id }).then(
        (detail) => {
          setOpen(detail);
          setError(null);
        },
        (err: unknown) => setError(toContractError(err).message),
      );
    },
    [transport],
  );

  return (
    <section className="panel captures-panel" aria-label="Captured requests" data-testid="captures-panel">
      <h3 className="panel__title">Captured requests</h3>
      {status ? (
        <>
          <p className={status.enabled ? 'captures-status' : 'muted captures-status'} data-testid="captures-status" data-value={status.enabled ? 'on' : 'off'}>
            {captureStatusLine(status)}
          </p>
          <p className="muted" data-testid="captures-kept">
            {captureKeptLine(status)}
          </p>
        </>
      ) : null}
      {error ? <p className="inline-error">{error}</p> : null}
      {captures.length === 0 ? (
        <p className="muted panel__empty" data-testid="captures-empty">
          {status?.enabled ? 'Nothing captured yet.' : 'Nothing captured.'}
        </p>
      ) : (
        <table className="data-table captures-table" data-testid="captures-table">
          <thead>
            <tr>
              <th>Time</th>
              <th>Model</th>
              <th>Client</th>
              <th>Status</th>
              <th>Request</th>
              <th>Answer</th>
              <th aria-label="Body" />
            </tr>
          </thead>
          <tbody>
            {captures.map((c) => (
              <tr key={c.id} data-testid="capture-row" data-capture-id={c.id} data-request-id={c.requestId} title={`${c.requestId}${c.traceId ? ` · trace ${c.traceId}` : ''} · ${c.endpoint}`}>
                <td className="num muted">{formatTime(c.ts)}</td>
                <td className="ellipsis">{c.model ?? '—'}</td>
                <td className="ellipsis">{c.client}</td>
                <td>
                  <Badge tone={statusTone(c.status)} value={String(c.status)}>
                    {c.status}
                    {c.errorCode ? ` ${c.errorCode}` : ''}
                  </Badge>
                  {c.reason === 'sample' ? <span className="muted"> sample</span> : null}
                </td>
                <td>{bodySizeLabel(c.request)}</td>
                <td>{bodySizeLabel(c.answer)}</td>
                <td>
                  <button type="button" className="button button--ghost" onClick={() => show(c.id)} data-testid="capture-show">
                    Show
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open ? <CaptureView detail={open} onClose={() => setOpen(null)} /> : null}
    </section>
  );
}

function CaptureView({ detail, onClose }: { detail: CaptureDetail; onClose: () => void }): React.JSX.Element {
  return (
    <div className="capture-view" role="region" aria-label={`Capture ${detail.id}`} data-testid="capture-view">
      <div className="capture-view__head">
        <span>
          Request <code data-testid="capture-request-id">{detail.requestId}</code>
          <CopyButton text={detail.requestId} label="Copy request id" />
          {detail.traceId ? (
            <>
              {' '}
              trace <code>{detail.traceId}</code>
            </>
          ) : null}
          {detail.upstream ? <span className="muted"> → {detail.upstream}</span> : null}
        </span>
        <button type="button" className="button button--ghost" onClick={onClose}>
          Close
        </button>
      </div>
      <p className="muted">Opening this capture was recorded in the audit log. Secrets (tokens, API keys, credential headers) were replaced by [redacted] before it was stored.</p>
      <BodyView title="Request" body={detail.request} testId="capture-request" />
      <BodyView title="Answer" body={detail.answer} testId="capture-answer" />
    </div>
  );
}

function BodyView({ title, body, testId }: { title: string; body: CaptureBody; testId: string }): React.JSX.Element {
  const without = bodyWithoutText(body);
  return (
    <div className="capture-body" data-testid={testId}>
      <h4>
        {title} <span className="muted">{bodySizeLabel(body)}</span>
      </h4>
      {without !== null ? <p className="muted">{without}</p> : <pre className="capture-body__text">{body.text}</pre>}
      {body.truncated && without === null ? <p className="muted">Truncated at the capture cap; the body was {body.sizeBytes.toLocaleString()} bytes.</p> : null}
    </div>
  );
}
