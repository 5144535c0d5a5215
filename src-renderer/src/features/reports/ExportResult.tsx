// A finished export: its folder (copyable), every file with its SHA-256 (short,
// the full digest on hover and in the copy), the signer or "not signed", and
// a Verify button that re-reads the folder.
import type { ReportExport } from '../../../../src-preload/contract/index.js';
import { Badge } from '../../components/Badge.js';
import { CopyButton } from '../../components/CopyButton.js';
import { shortHash } from '../../format/format.js';
import { GateSummary } from './GateSummary.js';
import { sizeText } from './report-format.js';
import { useVerify } from './use-verify.js';
import { VerifyFindings } from './VerifyFindings.js';

export function ExportResult({ record }: { record: ReportExport }): React.JSX.Element {
  const { state, verify } = useVerify();
  return (
    <section className="reports-result" data-testid="reports-result" data-export-id={record.id} aria-labelledby="reports-result-title">
      <h3 className="reports-result__title" id="reports-result-title">
        Exported “{record.title}”
      </h3>
      <p className="reports-result__dir">
        <span className="muted">Folder</span> <code data-testid="reports-result-dir">{record.dir}</code> <CopyButton text={record.dir} label="Copy the export folder path" />
      </p>
      <table className="data-table reports-files" data-testid="reports-files">
        <thead>
          <tr>
            <th scope="col">file</th>
            <th scope="col" className="col-num">size</th>
            <th scope="col">SHA-256</th>
          </tr>
        </thead>
        <tbody>
          {record.files.map((f) => (
            <tr key={f.name} data-testid="reports-file-row" data-name={f.name}>
              <td>
                <code>{f.name}</code>
              </td>
              <td className="col-num num">{sizeText(f.sizeBytes)}</td>
              <td>
                <code title={f.sha256} data-testid="reports-file-sha" data-sha256={f.sha256}>
                  {shortHash(f.sha256)}…
                </code>
              </td>
            </tr>
          ))}
          <tr data-testid="reports-file-row" data-name="manifest.json">
            <td>
              <code>manifest.json</code>
            </td>
            <td className="col-num muted">—</td>
            <td>
              <code title={record.manifestSha256} data-testid="reports-file-sha" data-sha256={record.manifestSha256}>
                {shortHash(record.manifestSha256)}…
              </code>
            </td>
          </tr>
        </tbody>
      </table>
      <p className="reports-result__facts">
        {record.signer ? (
          <>
            <Badge tone="ok">signed</Badge> by <code data-testid="reports-result-signer">{record.signer}</code>
          </>
        ) : (
          <Badge tone="neutral" testId="reports-result-signer">
            not signed
          </Badge>
        )}{' '}
        <GateSummary counts={record.gates} />
      </p>
      <button type="button" className="button" onClick={() => verify(record.dir)} disabled={state.status === 'running'} data-testid="reports-verify-button">
        {state.status === 'running' ? 'Verifying…' : 'Verify'}
      </button>
      <VerifyFindings state={state} testId="reports-verify-result" />
    </section>
  );
}
