// Export: formats, optional signing (key file path and, for an encrypted key,
// a passphrase that is sent with this one call and then cleared), an optional
// parent folder; progress from `report.progress` (the store's reports slice),
// of the export this panel started; Cancel while it runs; then the written folder.
import { useEffect, useRef, useState } from 'react';
import type { ContractError, ReportExport, ReportProgress } from '../../../../src-preload/contract/index.js';
import { useServices, useStoreChange } from '../../app/app-context.js';
import type { RootState } from '../../store/types.js';
import { isCancelled, toContractError } from '../../transport/transport.js';
import { CANCEL_CONFIRM_TIMEOUT_MS, cancelView } from './export-cancel.js';
import { ExportResult } from './ExportResult.js';
import { afterExport, DEFAULT_EXPORT, EXPORT_FORMATS, exportInput, type ExportDraft } from './export-form.js';
import { toggled, type RequestCheck } from './report-form.js';
import { errorAdvice, NO_PROGRESS, progressPct, reduceProgress, wantsPassphrase, type ExportProgressState } from './report-format.js';

export interface ExportPanelProps {
  /** The request as the form stands now (its window ends now). */
  buildRequest(): RequestCheck;
  onExported(record: ReportExport): void;
}

const selectProgress = (s: RootState): ReportProgress | null => s.reports.progress;

export function ExportPanel({ buildRequest, onExported }: ExportPanelProps): React.JSX.Element {
  const { transport } = useServices();
  const [draft, setDraft] = useState<ExportDraft>(DEFAULT_EXPORT);
  const [problems, setProblems] = useState<string[]>([]);
  const [error, setError] = useState<ContractError | null>(null);
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState<ExportProgressState>(NO_PROGRESS);
  const [result, setResult] = useState<ReportExport | null>(null);
  /** The running export's call was given up (its promise rejected with BRIDGE_CANCELLED). */
  const [cancelled, setCancelled] = useState(false);
  const [cancelTimedOut, setCancelTimedOut] = useState(false);
  const inFlight = useRef(false);
  const callAbort = useRef<AbortController | null>(null);
  const passphraseRef = useRef<HTMLInputElement>(null);
  const [askPassphrase, setAskPassphrase] = useState(false);

  useStoreChange(selectProgress, (p) => {
    if (p !== null) setProgress((s) => reduceProgress(s, p, inFlight.current));
  });
  useEffect(() => {
    if (askPassphrase) passphraseRef.current?.focus();
  }, [askPassphrase]);

  const afterCancel = cancelled ? cancelView(progress, cancelTimedOut) : null;
  // Waiting for the core to report where the cancelled export stopped has a deadline.
  useEffect(() => {
    if (afterCancel !== 'stopping') return undefined;
    const timer = window.setTimeout(() => setCancelTimedOut(true), CANCEL_CONFIRM_TIMEOUT_MS);
    return () => window.clearTimeout(timer);
  }, [afterCancel]);
  // It finished before the cancel reached it: show it like any finished export.
  const lateId = afterCancel === 'finished' ? progress.exportId : null;
  useEffect(() => {
    if (lateId === null) return undefined;
    let current = true;
    transport.invoke('reports.list', { limit: 50 }).then(
      (out) => {
        const record = out.exports.find((x) => x.id === lateId);
        if (!current || !record) return;
        setResult(record);
        onExported(record);
      },
      (err: unknown) => {
        if (current) setError(toContractError(err));
      },
    );
    return () => {
      current = false;
    };
  }, [lateId, transport, onExported]);

  const set = <K extends keyof ExportDraft>(key: K, value: ExportDraft[K]): void => setDraft((d) => ({ ...d, [key]: value }));

  const exporting = busy || afterCancel === 'stopping';

  const start = (e: React.FormEvent): void => {
    e.preventDefault();
    if (exporting) return;
    setError(null);
    const req = buildRequest();
    const check = req.ok ? exportInput(req.request, draft) : ({ ok: false, problems: req.problems.map((p) => `Request — ${p}`) } as const);
    if (!check.ok) {
      setProblems(check.problems);
      return;
    }
    setProblems([]);
    setResult(null);
    setAskPassphrase(false);
    setProgress(NO_PROGRESS);
    setCancelled(false);
    setCancelTimedOut(false);
    setBusy(true);
    inFlight.current = true;
    const abort = new AbortController();
    callAbort.current = abort;
    // The passphrase has been copied into the call's input: drop it from the form now.
    setDraft(afterExport);
    transport.invoke('reports.export', check.input, { signal: abort.signal }).then(
      (record) => {
        inFlight.current = false;
        callAbort.current = null;
        setBusy(false);
        setResult(record);
        setProgress((s) => (s.exportId === null || s.exportId === record.id ? s : NO_PROGRESS));
        onExported(record);
      },
      (err: unknown) => {
        inFlight.current = false;
        callAbort.current = null;
        setBusy(false);
        if (isCancelled(err)) {
          setCancelled(true);
          return;
        }
        const ce = toContractError(err);
        setError(ce);
        if (wantsPassphrase(ce.code)) setAskPassphrase(true);
      },
    );
  };

  const cancel = (): void => {
    callAbort.current?.abort();
  };

  const p = progress.last;
  const showProgress = (busy || p !== null) && afterCancel !== 'cancelled';
  return (
    <section className="reports-card" aria-labelledby="reports-export-title" data-testid="reports-export">
      <h2 className="panel__title reports-card__title" id="reports-export-title">
        Export
      </h2>
      <form className="reports-form__body" noValidate onSubmit={start} data-testid="reports-export-form">
        <fieldset className="reports-fieldset">
          <legend>
            Formats <span className="muted">— evidence.json and manifest.json are always written</span>
          </legend>
          <div className="reports-checks">
            {EXPORT_FORMATS.map((f) => (
              <label key={f.id} className="reports-check" title={f.label}>
                <input
                  type="checkbox"
                  checked={draft.formats.includes(f.id)}
                  onChange={(e) => set('formats', toggled(draft.formats, f.id, e.target.checked, EXPORT_FORMATS.map((x) => x.id)))}
                  data-testid={`reports-format-${f.id}`}
                />
                {f.id}
              </label>
            ))}
          </div>
        </fieldset>

        <label className="reports-check">
          <input type="checkbox" checked={draft.sign} onChange={(e) => set('sign', e.target.checked)} data-testid="reports-sign" />
          Sign the manifest (SSH signature)
        </label>
        {draft.sign ? (
          <div className="reports-sign">
            <fieldset className="reports-fieldset" data-testid="reports-sign-with">
              <legend>Signing key</legend>
              <div className="reports-checks">
              <label className="reports-check">
                <input type="radio" name="reports-sign-with" checked={draft.signWith === 'file'} onChange={() => set('signWith', 'file')} data-testid="reports-sign-file" />
                key file
              </label>
              <label className="reports-check">
                <input type="radio" name="reports-sign-with" checked={draft.signWith === 'agent'} onChange={() => set('signWith', 'agent')} data-testid="reports-sign-agent" />
                ssh-agent (the key never leaves the agent)
              </label>
              </div>
            </fieldset>
          </div>
        ) : null}
        {draft.sign && draft.signWith === 'agent' ? (
          <div className="reports-sign">
            <label className="reports-field">
              Key in the agent (optional)
              <input
                type="text"
                value={draft.agentKey}
                placeholder="SHA256:… or a word of the key's comment; empty = the first key"
                spellCheck={false}
                autoComplete="off"
                onChange={(e) => set('agentKey', e.target.value)}
                data-testid="reports-agent-key"
              />
            </label>
          </div>
        ) : null}
        {draft.sign && draft.signWith === 'file' ? (
          <div className="reports-sign">
            <label className="reports-field">
              Private key file on the console's machine
              <input
                type="text"
                value={draft.keyFile}
                placeholder="~/.ssh/id_ed25519"
                spellCheck={false}
                autoComplete="off"
                onChange={(e) => set('keyFile', e.target.value)}
                data-testid="reports-key-file"
              />
            </label>
            <label className="reports-field">
              Passphrase {askPassphrase ? <strong className="text-warn">(needed for this key)</strong> : <span className="muted">(only for an encrypted key)</span>}
              <input
                ref={passphraseRef}
                type="password"
                autoComplete="off"
                value={draft.passphrase}
                onChange={(e) => set('passphrase', e.target.value)}
                data-testid="reports-passphrase"
                aria-describedby="reports-passphrase-hint"
              />
              <span id="reports-passphrase-hint" className="muted">
                Sent with this export only, then cleared; never stored.
              </span>
            </label>
          </div>
        ) : null}

        <label className="reports-field">
          Output folder (optional)
          <input
            type="text"
            value={draft.outDir}
            placeholder="default: the console's data folder, reports/"
            spellCheck={false}
            onChange={(e) => set('outDir', e.target.value)}
            data-testid="reports-out-dir"
          />
        </label>

        {problems.length > 0 ? (
          <ul className="inline-error reports-problems" role="alert" data-testid="reports-export-problems">
            {problems.map((x) => (
              <li key={x}>{x}</li>
            ))}
          </ul>
        ) : null}
        {error ? (
          <div role="alert" data-testid="reports-export-error" data-code={error.code}>
            <p className="inline-error">
              <code>{error.code}</code> {error.message}
            </p>
            {errorAdvice(error.code) ? <p className="muted reports-hint">{errorAdvice(error.code)}</p> : null}
          </div>
        ) : null}

        {afterCancel === 'cancelled' ? (
          <p className="muted" role="status" data-testid="report-cancelled">
            Export cancelled — nothing was written.
          </p>
        ) : null}
        {afterCancel === 'finished' ? (
          <p className="text-warn" role="status" data-testid="report-cancel-late">
            The export had finished before the cancel reached the console: it is kept.
          </p>
        ) : null}
        {afterCancel === 'unconfirmed' ? (
          <p className="text-warn" role="status" data-testid="report-cancel-unconfirmed">
            The console has not reported that the export stopped: check the exports list before relying on it.
          </p>
        ) : null}

        <div className="reports-actions">
          <button type="submit" className="button button--primary" disabled={exporting} data-testid="reports-export-button">
            {exporting ? 'Exporting…' : 'Export'}
          </button>
          {exporting ? (
            <button type="button" className="button" onClick={cancel} disabled={!busy} data-testid="report-cancel">
              {busy ? 'Cancel export' : 'Cancelling…'}
            </button>
          ) : null}
        </div>
      </form>

      {showProgress ? (
        <div className="reports-progress" data-testid="reports-progress" data-state={p?.state ?? 'running'} aria-live="polite">
          <div className="reports-progress__text">
            <span>{p ? p.step : 'starting…'}</span>
            <span className="num muted">{p ? `${p.done}/${p.total}` : ''}</span>
          </div>
          <progress max={100} value={progressPct(p)} aria-label="Export progress" />
        </div>
      ) : null}

      {result ? <ExportResult record={result} /> : null}
    </section>
  );
}
