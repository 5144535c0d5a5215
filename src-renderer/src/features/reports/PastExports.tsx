// Exports already written (reports.list, newest first), each re-verifiable.
import type { ContractError, ReportExport } from '../../../../src-preload/contract/index.js';
import { Badge } from '../../components/Badge.js';
import { CopyButton } from '../../components/CopyButton.js';
import { GateSummary } from './GateSummary.js';
import { hostsText, windowText } from './report-format.js';
import { useVerify } from './use-verify.js';
import { VerifyFindings } from './VerifyFindings.js';
import { formatTimestamp } from '../../format/format.js';

export interface PastExportsProps {
  exports: readonly ReportExport[];
  error: ContractError | null;
  onRefresh(): void;
}

export function PastExports({ exports, error, onRefresh }: PastExportsProps): React.JSX.Element {
  return (
    <section className="reports-card" aria-labelledby="reports-list-title" data-testid="reports-list">
      <div className="reports-card__head">
        <h2 className="panel__title reports-card__title" id="reports-list-title">
          Past exports <span className="badge badge--neutral">{exports.length}</span>
        </h2>
        <button type="button" className="button button--ghost button--small reports-card__tool" onClick={onRefresh} data-testid="reports-list-refresh">
          Refresh
        </button>
      </div>
      {error ? (
        <p className="inline-error reports-card__pad" role="alert">
          <code>{error.code}</code> {error.message}
        </p>
      ) : null}
      {exports.length === 0 ? (
        <p className="muted panel__empty">No exports yet.</p>
      ) : (
        <table className="data-table reports-list-table">
          <thead>
            <tr>
              <th scope="col" className="reports-list-table__time">exported</th>
              <th scope="col">title</th>
              <th scope="col">hosts · window</th>
              <th scope="col" className="reports-list-table__gates">gates</th>
              <th scope="col" className="reports-list-table__signed">signature</th>
              <th scope="col">folder</th>
              <th scope="col" className="reports-list-table__verify">
                <span className="visually-hidden">verify</span>
              </th>
            </tr>
          </thead>
          {exports.map((x) => (
            <ExportRow key={x.id} x={x} />
          ))}
        </table>
      )}
    </section>
  );
}

function ExportRow({ x }: { x: ReportExport }): React.JSX.Element {
  const { state, verify } = useVerify();
  return (
    <tbody data-testid="reports-export-row" data-export-id={x.id} data-dir={x.dir}>
      <tr>
        <td className="num">{formatTimestamp(x.createdAt)}</td>
        <td>
          {x.title}
          <div className="muted">by {x.actor}</div>
        </td>
        <td>
          {hostsText(x.hosts)}
          <div className="muted">{windowText(x.fromMs, x.toMs)}</div>
        </td>
        <td>
          <GateSummary counts={x.gates} />
        </td>
        <td>
          {x.signer ? (
            <Badge tone="ok" title={x.signer}>
              signed
            </Badge>
          ) : (
            <Badge tone="neutral">not signed</Badge>
          )}
        </td>
        <td className="reports-list-table__dir">
          <code title={x.dir}>{x.dir}</code> <CopyButton text={x.dir} label={`Copy the folder of ${x.title}`} />
        </td>
        <td>
          <button
            type="button"
            className="button button--small"
            onClick={() => verify(x.dir)}
            disabled={state.status === 'running'}
            aria-label={`Verify the export ${x.title} of ${formatTimestamp(x.createdAt)}`}
            data-testid="reports-row-verify"
          >
            Verify
          </button>
        </td>
      </tr>
      {state.status !== 'idle' ? (
        <tr className="reports-list-table__findings">
          <td colSpan={7}>
            <VerifyFindings state={state} testId="reports-row-verify-result" />
          </td>
        </tr>
      ) : null}
    </tbody>
  );
}
