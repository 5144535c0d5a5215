// The live preview: the report page the core rendered, in a frame with every
// sandbox restriction on (no scripts, no forms, an opaque origin), and above it
// the gate counts of that evidence.
import type { ContractError, Evidence } from '../../../../src-preload/contract/index.js';
import { GateSummary } from './GateSummary.js';
import { countGates, errorAdvice, hostsText, windowText } from './report-format.js';
import { formatTime } from '../../format/format.js';

export interface Preview {
  evidence: Evidence;
  html: string;
}

export interface PreviewPanelProps {
  preview: Preview | null;
  busy: boolean;
  error: ContractError | null;
  /** Set when something the preview shows (a manual gate) changed after it was built. */
  stale: string | null;
}

export function PreviewPanel({ preview, busy, error, stale }: PreviewPanelProps): React.JSX.Element {
  const e = preview?.evidence ?? null;
  return (
    <section className="reports-card reports-preview" aria-labelledby="reports-preview-title" aria-busy={busy} data-testid="reports-preview" data-state={busy ? 'building' : preview ? 'shown' : 'empty'}>
      <div className="reports-card__head">
        <h2 className="panel__title reports-card__title" id="reports-preview-title">
          Preview
        </h2>
        {e ? <GateSummary counts={countGates(e.gates)} testId="reports-gate-summary" /> : null}
        <span className="reports-preview__status muted" role="status">
          {busy ? 'Building…' : ''}
        </span>
      </div>
      {e ? (
        <p className="reports-preview__facts muted" data-testid="reports-preview-facts">
          <strong className="reports-preview__name">{e.title}</strong> · {hostsText(e.hosts)} · {windowText(e.window.fromMs, e.window.toMs)} · built{' '}
          {formatTime(e.generatedAt)}
          {e.gates === null ? ' · gates section left out' : ''}
        </p>
      ) : null}
      {stale ? (
        <p className="text-warn reports-preview__facts" data-testid="reports-preview-stale">
          {stale}
        </p>
      ) : null}
      {error ? (
        <div className="reports-preview__facts" role="alert" data-testid="reports-preview-error">
          <p className="inline-error">
            <code>{error.code}</code> {error.message}
          </p>
          {errorAdvice(error.code) ? <p className="muted">{errorAdvice(error.code)}</p> : null}
        </div>
      ) : null}
      {preview ? (
        <iframe className="reports-preview__frame" title={`Report preview: ${preview.evidence.title}`} sandbox="" srcDoc={preview.html} referrerPolicy="no-referrer" data-testid="reports-preview-frame" />
      ) : (
        <p className="empty-state reports-preview__empty">
          {busy ? 'Building the evidence…' : 'Press Preview to build the report from the request on the left. Nothing is written until you export.'}
        </p>
      )}
    </section>
  );
}
