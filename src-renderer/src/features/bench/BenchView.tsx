// The Benchmarks view: saved scenarios (load into the form, save, delete), a
// scenario form (synthetic prompts or a JSONL file read in the browser and
// sent inline), a live progress bar with ETA and cancel, stored runs
// (baseline, export, compare, GuideLLM import), a run's table, its evaluation
// figures (formula on hover, "unavailable" rather than 0), the evaluation of a
// time window of proxy traffic, and the comparison of two runs with deltas and
// charts.
import { useCallback, useEffect, useState } from 'react';
import type { BenchProgress, BenchRun, CompareRow, DamagedRun, Evaluation, SavedScenario } from '../../../../src-preload/contract/index.js';
import { useAppStore, useServices, useStoreChange } from '../../app/app-context.js';
import type { RootState } from '../../store/types.js';
import { toContractError } from '../../transport/transport.js';
import { CompareCharts } from './CompareCharts.js';
import { RunList } from './RunList.js';
import { RunTable } from './RunTable.js';
import { figureText, num, peaksText } from './bench-format.js';
import { DEFAULT_FORM, formFromScenario, scenarioFromForm, windowOf, WINDOWS, type ScenarioForm } from './scenario-form.js';
import { formatTime } from '../../format/format.js';

const METRIC_LABEL: Record<CompareRow['metric'], string> = {
  ttftP50Ms: 'TTFT p50 (ms)',
  ttftP95Ms: 'TTFT p95 (ms)',
  latencyP50Ms: 'latency p50 (ms)',
  latencyP95Ms: 'latency p95 (ms)',
  itlP50Ms: 'ITL p50 (ms)',
  outputTokPerS: 'output tok/s',
  requestsPerS: 'req/s',
};

const selectProgress = (s: RootState): BenchProgress | null => s.bench.progress;

export function BenchView(): React.JSX.Element {
  const { transport, store } = useServices();
  const [form, setForm] = useState<ScenarioForm>(DEFAULT_FORM);
  const set = <K extends keyof ScenarioForm>(key: K, value: ScenarioForm[K]): void => setForm((f) => ({ ...f, [key]: value }));
  const [saved, setSaved] = useState<SavedScenario[]>([]);
  const [loaded, setLoaded] = useState<SavedScenario | null>(null);
  const [windowMinutes, setWindowMinutes] = useState(60);
  const [windowModel, setWindowModel] = useState('');
  const [windowEval, setWindowEval] = useState<{ label: string; evaluation: Evaluation } | null>(null);
  const progress = useAppStore(selectProgress);
  const [runs, setRuns] = useState<BenchRun[]>([]);
  const [damaged, setDamaged] = useState<DamagedRun[]>([]);
  const [selected, setSelected] = useState<string | null>(null);
  const [other, setOther] = useState<string | null>(null);
  const [evaluation, setEvaluation] = useState<Evaluation | null>(null);
  const [compare, setCompare] = useState<{ a: BenchRun; b: BenchRun; rows: CompareRow[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const load = useCallback(() => {
    transport.invoke('bench.listRuns', {}).then(
      (out) => {
        setRuns(out.runs);
        setDamaged(out.damaged);
        setSelected((s) => s ?? out.runs.find((r) => r.state !== 'running')?.id ?? null);
      },
      (err: unknown) => setError(toContractError(err).message),
    );
  }, [transport]);
  const loadScenarios = useCallback(() => {
    transport.invoke('bench.listScenarios', {}).then(
      (out) => setSaved(out.scenarios),
      (err: unknown) => setError(toContractError(err).message),
    );
  }, [transport]);
  useEffect(() => load(), [load]);
  useEffect(() => loadScenarios(), [loadScenarios]);
  // a run that ends (any bench.progress that is not `running`) is shown, and the list re-read
  useStoreChange(selectProgress, (p) => {
    if (p === null || p.state === 'running') return;
    setSelected(p.runId);
    load();
  });
  useEffect(() => {
    if (!selected) return;
    transport.invoke('bench.evaluate', { source: { kind: 'run', runId: selected } }).then(setEvaluation, () => setEvaluation(null));
  }, [transport, selected, runs]);
  useEffect(() => {
    if (!selected || !other || selected === other) {
      setCompare(null);
      return;
    }
    transport.invoke('bench.compare', { a: other, b: selected }).then(setCompare, (err: unknown) => setError(toContractError(err).message));
  }, [transport, selected, other]);

  const built = (): ReturnType<typeof scenarioFromForm> => {
    setError(null);
    setNotice(null);
    const out = scenarioFromForm(form, loaded?.scenario ?? null);
    if ('error' in out) setError(out.error);
    return out;
  };

  const start = (e: React.FormEvent): void => {
    e.preventDefault();
    const out = built();
    if ('error' in out) return;
    const levelCount = out.scenario.levels.length;
    transport.invoke('bench.start', { scenario: out.scenario }).then(
      (res) => store.getState().startBenchProgress({ runId: res.runId, name: out.scenario.name, state: 'running', phase: 'level', level: null, levelIndex: 0, levelCount, done: 0, total: 0, errors: 0, elapsedMs: 0, etaMs: null, message: null }),
      (err: unknown) => setError(toContractError(err).message),
    );
  };

  const check = (): void => {
    const out = built();
    if ('error' in out) return;
    transport.invoke('bench.check', { scenario: out.scenario }).then(
      (res) => setNotice(`scenario ok: ${res.prompts} prompt${res.prompts === 1 ? '' : 's'}${res.upstream ? `, upstream ${res.upstream}` : ''}`),
      (err: unknown) => setError(toContractError(err).message),
    );
  };

  const save = (asNew: boolean): void => {
    const out = built();
    if ('error' in out) return;
    const id = asNew ? undefined : loaded?.id;
    transport.invoke('bench.saveScenario', { ...(id ? { id } : {}), scenario: out.scenario }).then(
      (res) => {
        setLoaded(res);
        setNotice(`scenario ${res.scenario.name} saved`);
        loadScenarios();
      },
      (err: unknown) => setError(toContractError(err).message),
    );
  };

  const loadScenario = (s: SavedScenario): void => {
    setError(null);
    setLoaded(s);
    setForm(formFromScenario(s.scenario));
    setNotice(`scenario ${s.scenario.name} loaded into the form`);
  };

  const deleteScenario = (s: SavedScenario): void => {
    transport.invoke('bench.deleteScenario', { id: s.id }).then(
      () => {
        if (loaded?.id === s.id) setLoaded(null);
        setNotice(`scenario ${s.scenario.name} deleted`);
        loadScenarios();
      },
      (err: unknown) => setError(toContractError(err).message),
    );
  };

  const readJsonl = (file: File | undefined): void => {
    if (!file) return;
    setError(null);
    file.text().then(
      (text) => setForm((f) => ({ ...f, promptMode: 'jsonl', jsonl: { text, filename: file.name } })),
      (err: unknown) => setError(`cannot read ${file.name}: ${(err as Error).message}`),
    );
  };

  const importGuidellm = (input: HTMLInputElement): void => {
    const file = input.files?.[0];
    if (!file) return;
    setError(null);
    setNotice(null);
    file
      .text()
      .then((text) => transport.invoke('bench.importGuidellm', { text, name: file.name.replace(/\.json$/i, '').slice(0, 120) }))
      .then(
        (out) => {
          setNotice(`imported ${file.name}: ${out.levels} level${out.levels === 1 ? '' : 's'}${out.notes.length ? ` — ${out.notes.join('; ')}` : ''}`);
          setSelected(out.runId);
          load();
        },
        (err: unknown) => setError(toContractError(err).message),
      )
      .finally(() => {
        input.value = '';
      });
  };

  const evaluateWindow = (e: React.FormEvent): void => {
    e.preventDefault();
    setError(null);
    const label = WINDOWS.find((w) => w.minutes === windowMinutes)?.label ?? `last ${windowMinutes} min`;
    const model = windowModel.trim();
    transport.invoke('bench.evaluate', { source: { kind: 'window', ...windowOf(windowMinutes, Date.now()), ...(model ? { model } : {}) } }).then(
      (evaluation) => setWindowEval({ label: `${label}${model ? `, ${model}` : ''}`, evaluation }),
      (err: unknown) => setError(toContractError(err).message),
    );
  };

  const act = (p: Promise<unknown>, ok: string) =>
    p.then(
      () => {
        setNotice(ok);
        load();
      },
      (err: unknown) => setError(toContractError(err).message),
    );

  const download = (runId: string, format: 'json' | 'markdown') => {
    transport.invoke('bench.export', { runId, format }).then(
      (out) => {
        const url = URL.createObjectURL(new Blob([out.text], { type: out.mime }));
        const a = document.createElement('a');
        a.href = url;
        a.download = out.filename;
        a.click();
        URL.revokeObjectURL(url);
      },
      (err: unknown) => setError(toContractError(err).message),
    );
  };

  const run = runs.find((r) => r.id === selected) ?? null;
  const running = progress?.state === 'running';
  const pct = progress && progress.total > 0 ? Math.min(100, (progress.done / progress.total) * 100) : 0;

  return (
    <section className="bench" aria-labelledby="bench-title" data-testid="bench-view">
      <div className="view-title">
        <h1 id="bench-title">Benchmarks</h1>
      </div>
      <div className="panel" data-testid="bench-scenarios">
        <h3 className="panel__title">Saved scenarios</h3>
        {saved.length === 0 ? (
          <p className="muted">No saved scenarios yet: fill in the form and press “Save scenario”.</p>
        ) : (
          <table className="data-table" data-testid="bench-scenario-list">
            <thead>
              <tr>
                <th>name</th>
                <th>target</th>
                <th>prompts</th>
                <th>levels</th>
                <th>updated</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {saved.map((sc) => (
                <tr key={sc.id} data-testid="bench-scenario-row" aria-current={loaded?.id === sc.id ? 'true' : undefined}>
                  <td>
                    {sc.scenario.name}
                    {loaded?.id === sc.id ? ' (in the form)' : ''}
                  </td>
                  <td>{targetText(sc)}</td>
                  <td>{promptsText(sc)}</td>
                  <td>{sc.scenario.levels.join(', ')}</td>
                  <td>{formatTime(sc.updatedAt)}</td>
                  <td>
                    <button type="button" className="button button--ghost" onClick={() => loadScenario(sc)} aria-label={`load ${sc.scenario.name} into the form`} data-testid="bench-scenario-load">
                      Load
                    </button>
                    <button type="button" className="button button--ghost" onClick={() => deleteScenario(sc)} aria-label={`delete scenario ${sc.scenario.name}`} data-testid="bench-scenario-delete">
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <form className="panel bench-form" onSubmit={start} data-testid="bench-form" style={{ display: 'flex', flexWrap: 'wrap', gap: 8, alignItems: 'end' }}>
        <label>
          Name <input value={form.name} onChange={(e) => set('name', e.target.value)} data-testid="bench-name" required />
        </label>
        <label>
          {loaded && loaded.scenario.target.kind !== 'proxy' ? `Model (${loaded.scenario.target.kind} target kept)` : 'Model (via proxy)'}{' '}
          <input value={form.model} onChange={(e) => set('model', e.target.value)} data-testid="bench-model" required={!loaded || loaded.scenario.target.kind !== 'tunnel'} />
        </label>
        <label>
          Class
          <select value={form.cls} onChange={(e) => set('cls', e.target.value as 'system' | 'batch')} data-testid="bench-class">
            <option value="batch">batch</option>
            <option value="system">system</option>
          </select>
        </label>
        <label>
          Concurrency levels <input value={form.levels} onChange={(e) => set('levels', e.target.value)} data-testid="bench-levels" size={10} />
        </label>
        <label>
          Requests/level{' '}
          <input
            type="number"
            min={1}
            value={form.count}
            onChange={(e) => set('count', Number(e.target.value))}
            data-testid="bench-count"
            style={{ width: 64 }}
            disabled={loaded !== null && loaded.scenario.perLevel.kind !== 'requests'}
            title={loaded !== null && loaded.scenario.perLevel.kind !== 'requests' ? `the loaded scenario runs each level by ${loaded.scenario.perLevel.kind}; kept` : undefined}
          />
        </label>
        <label>
          max_tokens <input type="number" min={1} value={form.maxTokens} onChange={(e) => set('maxTokens', Number(e.target.value))} data-testid="bench-max-tokens" style={{ width: 72 }} />
        </label>
        <label>
          <input type="checkbox" checked={form.thinking} onChange={(e) => set('thinking', e.target.checked)} /> thinking
        </label>
        <label>
          Prompts
          <select value={form.promptMode} onChange={(e) => set('promptMode', e.target.value as ScenarioForm['promptMode'])} data-testid="bench-prompt-mode">
            <option value="synthetic">synthetic</option>
            <option value="jsonl">JSONL file</option>
            {loaded?.scenario.prompts.kind === 'jsonl' ? <option value="kept">file on the console: {loaded.scenario.prompts.file}</option> : null}
          </select>
        </label>
        {form.promptMode === 'kept' && loaded?.scenario.prompts.kind === 'jsonl' ? (
          <span className="text-warn" data-testid="bench-kept-file-warning">
            The console no longer reads a prompt file by its path: choose &ldquo;JSONL file&rdquo; and pick {loaded.scenario.prompts.file.split('/').pop()} again, then save.
          </span>
        ) : null}
        {form.promptMode === 'synthetic' ? (
          <label>
            Input tokens <input type="number" min={1} value={form.inputTokens} onChange={(e) => set('inputTokens', Number(e.target.value))} data-testid="bench-input-tokens" style={{ width: 72 }} />
          </label>
        ) : null}
        {form.promptMode === 'jsonl' ? (
          <label>
            JSONL prompt file (one chat per line){' '}
            <input type="file" accept=".jsonl,.json,.txt,application/jsonl,application/x-ndjson" onChange={(e) => readJsonl(e.target.files?.[0])} data-testid="bench-jsonl-file" />
            <span className="muted" data-testid="bench-jsonl-loaded">
              {form.jsonl ? ` ${form.jsonl.filename}: ${countLines(form.jsonl.text)} non-empty lines, sent inline` : ' no file chosen'}
            </span>
          </label>
        ) : null}
        <label style={{ flexBasis: '100%' }}>
          response_format JSON Schema (optional)
          <textarea value={form.schema} onChange={(e) => set('schema', e.target.value)} rows={2} style={{ width: '100%' }} data-testid="bench-schema" placeholder='{"type":"object","required":["status"]}' />
        </label>
        <button type="submit" className="button button--primary" disabled={running} data-testid="bench-start">
          Start
        </button>
        <button type="button" className="button" onClick={check} data-testid="bench-check">
          Check
        </button>
        <button type="button" className="button" onClick={() => save(false)} data-testid="bench-save">
          {loaded ? `Save “${loaded.scenario.name}”` : 'Save scenario'}
        </button>
        {loaded ? (
          <>
            <button type="button" className="button" onClick={() => save(true)} data-testid="bench-save-new">
              Save as new
            </button>
            <button
              type="button"
              className="button button--ghost"
              onClick={() => {
                setLoaded(null);
                setForm(DEFAULT_FORM);
              }}
              data-testid="bench-new"
            >
              New scenario
            </button>
          </>
        ) : null}
      </form>
      {error ? (
        <p className="error" role="alert" data-testid="bench-error">
          {error}
        </p>
      ) : null}
      {notice ? (
        <p role="status" data-testid="bench-notice">
          {notice}
        </p>
      ) : null}
      {progress ? (
        <div className="panel" data-testid="bench-progress" data-state={progress.state}>
          <div>
            <strong>{progress.name}</strong> — {progress.state}
            {progress.level !== null ? ` · level ${progress.level} (${progress.levelIndex + 1}/${progress.levelCount})` : ''} · {progress.done}/{progress.total || '?'} requests · {progress.errors} errors · ETA{' '}
            {progress.etaMs === null ? '?' : `${Math.ceil(progress.etaMs / 1000)} s`}
            {progress.message ? ` · ${progress.message}` : ''}
          </div>
          <progress max={100} value={pct} style={{ width: '100%' }} aria-label="Benchmark progress" />
          {running ? (
            <button type="button" className="button" onClick={() => void act(transport.invoke('bench.cancel', { runId: progress.runId }), 'cancel requested')} data-testid="bench-cancel">
              Cancel
            </button>
          ) : null}
        </div>
      ) : null}
      <div className="panel">
        <h3 className="panel__title">Runs</h3>
        <label>
          Import a GuideLLM report (benchmarks.json){' '}
          <input type="file" accept=".json,application/json" onChange={(e) => importGuidellm(e.currentTarget)} data-testid="bench-import-guidellm" />
        </label>
        <RunList
          runs={runs}
          damaged={damaged}
          selected={selected}
          other={other}
          onSelect={setSelected}
          onCompareWith={setOther}
          onBaseline={(r) => void act(transport.invoke('bench.setBaseline', { runId: r.id }), `${r.name} is the baseline of ${r.model ?? 'its model'}`)}
          onDownload={download}
          onDelete={(id) => void act(transport.invoke('bench.deleteRun', { runId: id }), `run ${id} deleted`)}
        />
      </div>
      {run ? (
        <div className="panel">
          <h3 className="panel__title">
            {run.name} — {run.state}
            {run.note ? ` (${run.note})` : ''}
          </h3>
          <RunTable run={run} />
          <p className="muted" data-testid="bench-peaks">
            Peaks while running: {peaksText(run.peaks)}
          </p>
          {evaluation ? <EvalFigures evaluation={evaluation} testId="bench-eval" /> : null}
        </div>
      ) : null}
      <div className="panel" data-testid="bench-window">
        <h3 className="panel__title">Evaluate proxy traffic</h3>
        <form className="bench-form" onSubmit={evaluateWindow} style={{ display: 'flex', flexWrap: 'wrap', gap: 8, alignItems: 'end' }}>
          <label>
            Window
            <select value={windowMinutes} onChange={(e) => setWindowMinutes(Number(e.target.value))} data-testid="bench-window-select">
              {WINDOWS.map((w) => (
                <option key={w.minutes} value={w.minutes}>
                  {w.label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Model (optional) <input value={windowModel} onChange={(e) => setWindowModel(e.target.value)} data-testid="bench-window-model" placeholder="all models" />
          </label>
          <button type="submit" className="button" data-testid="bench-window-evaluate">
            Evaluate
          </button>
        </form>
        {windowEval ? (
          <>
            <p className="muted" data-testid="bench-window-source">
              {windowEval.evaluation.source}, {windowEval.label}: {formatTime(windowEval.evaluation.fromMs)} – {formatTime(windowEval.evaluation.toMs)}
            </p>
            <EvalFigures evaluation={windowEval.evaluation} testId="bench-window-eval" />
          </>
        ) : null}
      </div>
      {compare ? (
        <div className="panel" data-testid="bench-compare">
          <h3 className="panel__title">
            {compare.a.name} → {compare.b.name}
          </h3>
          <table className="data-table">
            <thead>
              <tr>
                <th>level</th>
                <th>figure</th>
                <th>{compare.a.name}</th>
                <th>{compare.b.name}</th>
                <th>Δ</th>
              </tr>
            </thead>
            <tbody>
              {compare.rows
                .filter((r) => r.metric === 'ttftP95Ms' || r.metric === 'latencyP95Ms' || r.metric === 'outputTokPerS')
                .map((r) => (
                  <tr key={`${r.phase}${r.level}${r.metric}`}>
                    <td>{r.phase === 'stability' ? `stability c=${r.level}` : `c=${r.level}`}</td>
                    <td>{METRIC_LABEL[r.metric]}</td>
                    <td>{num(r.a, 1)}</td>
                    <td>{num(r.b, 1)}</td>
                    <td>{r.delta === null ? 'n/a' : `${r.delta > 0 ? '+' : ''}${r.delta.toFixed(1)} (${r.deltaPct === null ? 'n/a' : `${r.deltaPct.toFixed(0)}%`})`}</td>
                  </tr>
                ))}
            </tbody>
          </table>
          <CompareCharts runs={[compare.a, compare.b]} />
        </div>
      ) : run ? (
        <div className="panel">
          <CompareCharts runs={[run]} />
        </div>
      ) : null}
    </section>
  );
}

function EvalFigures({ evaluation, testId }: { evaluation: Evaluation; testId: string }): React.JSX.Element {
  return (
    <dl className="bench-eval" data-testid={testId} style={{ display: 'grid', gridTemplateColumns: 'repeat(4, 1fr)', gap: 8 }}>
      {evaluation.figures.map((f) => (
        <div key={f.key} title={`${f.formula}${f.unavailableReason ? `\nunavailable: ${f.unavailableReason}` : ''}\n${f.samples} samples`}>
          <dt>{f.label}</dt>
          <dd>
            {figureText(f)}
            {f.unstable ? ' · unstable (<20 samples)' : ''}
          </dd>
        </div>
      ))}
    </dl>
  );
}

function targetText(sc: SavedScenario): string {
  const t = sc.scenario.target;
  if (t.kind === 'proxy') return `${t.model} via proxy (${t.class})`;
  if (t.kind === 'tunnel') return `tunnel ${t.host}/${t.serviceId}`;
  return `${t.model} at ${t.baseUrl}`;
}

function promptsText(sc: SavedScenario): string {
  const p = sc.scenario.prompts;
  if (p.kind === 'synthetic') return `synthetic, ${p.inputTokens} tokens`;
  if (p.kind === 'inline') return `${p.filename ?? 'inline JSONL'} (${countLines(p.text)} lines)`;
  return `file ${p.file}`;
}

function countLines(text: string): number {
  return text.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.trim().startsWith('//')).length;
}
