// The Reports view, for the end of a shift: say what to report on, preview the
// report the core builds, mark the manual gates, export (optionally signed)
// into a folder with SHA-256 digests, and verify any export written before.
import { useCallback, useEffect, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { ContractError, Gate, ReportExport } from '../../../../src-preload/contract/index.js';
import { useAppStore, useServices } from '../../app/app-context.js';
import { selectHostLabels } from '../../store/fleet-slice.js';
import { isCancelled, toContractError } from '../../transport/transport.js';
import { ExportPanel } from './ExportPanel.js';
import { GatesEditor } from './GatesEditor.js';
import { PastExports } from './PastExports.js';
import { PreviewPanel, type Preview } from './PreviewPanel.js';
import { autoPreviewKey, DEFAULT_REPORT_FORM, requestFromForm, type ReportForm } from './report-form.js';
import { RequestForm } from './RequestForm.js';
import './reports.css';

/** How long the form must stay unchanged before the automatic preview runs. */
const AUTO_PREVIEW_DELAY_MS = 600;

export function ReportsView(): React.JSX.Element {
  const { transport } = useServices();
  const hostLabels = useAppStore(useShallow(selectHostLabels));
  const [form, setForm] = useState<ReportForm>(DEFAULT_REPORT_FORM);
  const [problems, setProblems] = useState<string[]>([]);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [previewBusy, setPreviewBusy] = useState(false);
  const [previewError, setPreviewError] = useState<ContractError | null>(null);
  const [stale, setStale] = useState<string | null>(null);
  const [gates, setGates] = useState<Gate[]>([]);
  const [gatesError, setGatesError] = useState<ContractError | null>(null);
  const [exports, setExports] = useState<ReportExport[]>([]);
  const [exportsError, setExportsError] = useState<ContractError | null>(null);
  const formRef = useRef(form);
  const previewSeq = useRef(0);
  const previewAbort = useRef<AbortController | null>(null);

  useEffect(() => {
    formRef.current = form;
  }, [form]);

  // Only the latest request's answer is shown: a newer preview cancels the one
  // still building (its live checks stop in the core), and a late answer is dropped.
  const runPreview = useCallback(() => {
    const check = requestFromForm(formRef.current, Date.now());
    if (!check.ok) {
      setProblems(check.problems);
      return;
    }
    setProblems([]);
    const seq = ++previewSeq.current;
    previewAbort.current?.abort();
    const abort = new AbortController();
    previewAbort.current = abort;
    setPreviewBusy(true);
    setPreviewError(null);
    transport.invoke('reports.preview', { request: check.request }, { signal: abort.signal }).then(
      (out) => {
        if (seq !== previewSeq.current) return;
        setPreview(out);
        setPreviewBusy(false);
        setStale(null);
      },
      (err: unknown) => {
        if (seq !== previewSeq.current || isCancelled(err)) return;
        setPreviewBusy(false);
        setPreviewError(toContractError(err));
      },
    );
  }, [transport]);

  // Nobody will see a preview still building when the view closes.
  useEffect(() => () => previewAbort.current?.abort(), []);

  const autoKey = autoPreviewKey(form);
  useEffect(() => {
    if (autoKey === null) return undefined;
    const timer = window.setTimeout(runPreview, AUTO_PREVIEW_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [autoKey, runPreview]);

  const loadExports = useCallback(() => {
    transport.invoke('reports.list', { limit: 50 }).then(
      (out) => {
        setExports(out.exports);
        setExportsError(null);
      },
      (err: unknown) => setExportsError(toContractError(err)),
    );
  }, [transport]);
  useEffect(() => loadExports(), [loadExports]);

  useEffect(() => {
    transport.invoke('reports.gates', {}).then(
      (out) => {
        setGates(out.gates);
        setGatesError(null);
      },
      (err: unknown) => setGatesError(toContractError(err)),
    );
  }, [transport]);

  const onGateSaved = (g: Gate): void => {
    setGates((list) => list.map((x) => (x.id === g.id ? g : x)));
    if (!preview || preview.evidence.gates === null) return;
    if (formRef.current.live) setStale(`“${g.label}” changed after this preview was built: press Preview to see it in the report.`);
    else runPreview();
  };

  const buildRequest = useCallback(() => requestFromForm(formRef.current, Date.now()), []);

  return (
    <section className="reports" aria-labelledby="reports-title" data-testid="reports-view">
      <div className="view-title">
        <h1 id="reports-title">Reports</h1>
        <p className="muted">Evidence of what the fleet did in a time window: preview it, mark the manual gates, export it with SHA-256 digests (and a signature), verify it later.</p>
      </div>
      <div className="reports__grid">
        <div className="reports__side">
          <section className="reports-card">
            <RequestForm form={form} onChange={setForm} hostLabels={hostLabels} onPreview={runPreview} previewBusy={previewBusy} problems={problems} />
          </section>
          <ExportPanel buildRequest={buildRequest} onExported={loadExports} />
        </div>
        <PreviewPanel preview={preview} busy={previewBusy} error={previewError} stale={stale} />
      </div>
      <GatesEditor gates={gates} error={gatesError} onSaved={onGateSaved} />
      <PastExports exports={exports} error={exportsError} onRefresh={loadExports} />
    </section>
  );
}
