// What to report on: title, hosts (none ticked = all), the time window (a
// preset or a custom from/to), the sections, and whether to run the live
// checks over SSH. Submitting previews.
import { REPORT_SECTIONS } from '../../../../src-preload/contract/index.js';
import { SECTION_LABELS, TITLE_MAX, toggled, WINDOW_PRESETS, withPreset, type ReportForm, type WindowPreset } from './report-form.js';

export interface RequestFormProps {
  form: ReportForm;
  onChange(update: (form: ReportForm) => ReportForm): void;
  hostLabels: readonly string[];
  onPreview(): void;
  previewBusy: boolean;
  problems: readonly string[];
}

export function RequestForm({ form, onChange, hostLabels, onPreview, previewBusy, problems }: RequestFormProps): React.JSX.Element {
  const set = <K extends keyof ReportForm>(key: K, value: ReportForm[K]): void => onChange((f) => ({ ...f, [key]: value }));
  // Hosts ticked earlier but gone from the fleet stay visible so they can be unticked.
  const hosts = [...hostLabels, ...form.hosts.filter((h) => !hostLabels.includes(h))];
  return (
    <form
      className="reports-form"
      noValidate
      aria-labelledby="reports-request-title"
      data-testid="reports-form"
      onSubmit={(e) => {
        e.preventDefault();
        onPreview();
      }}
    >
      <h2 className="panel__title reports-card__title" id="reports-request-title">
        Report request
      </h2>
      <div className="reports-form__body">
        <label className="reports-field">
          Title (optional)
          <input
            type="text"
            value={form.title}
            maxLength={TITLE_MAX + 50}
            placeholder="e.g. Night shift handover"
            onChange={(e) => set('title', e.target.value)}
            data-testid="reports-title"
          />
        </label>

        <fieldset className="reports-fieldset" data-testid="reports-hosts">
          <legend>
            Hosts <span className="muted">— none ticked = all hosts</span>
          </legend>
          {hosts.length === 0 ? <p className="muted reports-fieldset__empty">Waiting for the fleet…</p> : null}
          <div className="reports-checks">
            {hosts.map((h) => (
              <label key={h} className="reports-check">
                <input
                  type="checkbox"
                  checked={form.hosts.includes(h)}
                  onChange={(e) => onChange((f) => ({ ...f, hosts: toggled(f.hosts, h, e.target.checked, hosts) }))}
                  data-testid={`reports-host-${h}`}
                />
                <code>{h}</code>
                {hostLabels.includes(h) ? null : <span className="text-warn"> (not in the fleet)</span>}
              </label>
            ))}
          </div>
        </fieldset>

        <fieldset className="reports-fieldset" data-testid="reports-window">
          <legend>Time window</legend>
          <div className="reports-checks">
            {[...WINDOW_PRESETS, { id: 'custom' as const, label: 'custom' }].map((p) => (
              <label key={p.id} className="reports-check">
                <input
                  type="radio"
                  name="reports-window"
                  value={p.id}
                  checked={form.preset === p.id}
                  onChange={() => onChange((f) => withPreset(f, p.id as WindowPreset, Date.now()))}
                  data-testid={`reports-preset-${p.id}`}
                />
                {p.label}
              </label>
            ))}
          </div>
          {form.preset === 'custom' ? (
            <div className="reports-custom-window">
              <label className="reports-field">
                From
                <input type="datetime-local" value={form.customFrom} onChange={(e) => set('customFrom', e.target.value)} data-testid="reports-from" />
              </label>
              <label className="reports-field">
                To
                <input type="datetime-local" value={form.customTo} onChange={(e) => set('customTo', e.target.value)} data-testid="reports-to" />
              </label>
            </div>
          ) : null}
        </fieldset>

        <fieldset className="reports-fieldset" data-testid="reports-sections">
          <legend>Sections</legend>
          <div className="reports-checks reports-checks--grid">
            {REPORT_SECTIONS.map((s) => (
              <label key={s} className="reports-check">
                <input
                  type="checkbox"
                  checked={form.sections.includes(s)}
                  onChange={(e) => onChange((f) => ({ ...f, sections: toggled(f.sections, s, e.target.checked, REPORT_SECTIONS) }))}
                  data-testid={`reports-section-${s}`}
                />
                {SECTION_LABELS[s]}
              </label>
            ))}
          </div>
        </fieldset>

        <label className="reports-check reports-live">
          <input type="checkbox" checked={form.live} onChange={(e) => set('live', e.target.checked)} data-testid="reports-live" aria-describedby="reports-live-hint" />
          Run live checks over SSH
        </label>
        <p id="reports-live-hint" className="muted reports-hint">
          {form.live
            ? 'Reads each host now (sshd settings, GPUs, service versions): takes a few seconds. The preview refreshes only when you press Preview.'
            : 'Reports from what the console stored only; the preview refreshes as you change the form.'}
        </p>

        <label className="reports-check reports-live">
          <input
            type="checkbox"
            checked={form.includeLogs}
            onChange={(e) => set('includeLogs', e.target.checked)}
            data-testid="reports-include-logs"
            aria-describedby="reports-logs-hint"
          />
          Include service log lines around lifecycle actions
        </label>
        <p id="reports-logs-hint" className="muted reports-hint">
          {form.includeLogs
            ? "Reads each service's log over SSH from 30 s before to 60 s after every lifecycle action in the window (masked, at most 200 lines each)."
            : 'Off: no log text is in the report.'}
        </p>

        {problems.length > 0 ? (
          <ul className="inline-error reports-problems" role="alert" data-testid="reports-form-problems">
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        ) : null}

        <div className="reports-actions">
          <button type="submit" className="button button--primary" disabled={previewBusy} data-testid="reports-preview-button">
            {previewBusy ? 'Building preview…' : 'Preview'}
          </button>
        </div>
      </div>
    </form>
  );
}
