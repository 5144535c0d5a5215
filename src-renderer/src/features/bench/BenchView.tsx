// The Benchmarks view: a scenario form, a live progress bar with ETA and
// cancel, stored runs (baseline, export, compare), a run's table, its
// evaluation figures (formula on hover, "unavailable" rather than 0) and the
// comparison of two runs with deltas and charts.
import { useCallback, useEffect, useState } from 'react';
import type { BenchProgress, BenchRun, CompareRow, Evaluation } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';
import { CompareCharts } from './CompareCharts.js';
import { RunTable } from './RunTable.js';
import { figureText, num } from './bench-format.js';

const METRIC_LABEL: Record<CompareRow['metric'], string> = {
  ttftP50Ms: 'TTFT p50 (ms)',
  ttftP95Ms: 'TTFT p95 (ms)',
  latencyP50Ms: 'latency p50 (ms)',
  latencyP95Ms: 'latency p95 (ms)',
  itlP50Ms: 'ITL p50 (ms)',
  outputTokPerS: 'output tok/s',
  requestsPerS: 'req/s',
};

export function BenchView(): React.JSX.Element {
  const { transport } = useServices();
  const [name, setName] = useState('sweep');
  const [model, setModel] = useState('qwen');
  const [cls, setCls] = useState<'system' | 'batch'>('batch');
  const [levels, setLevels] = useState('1,2,4,8');
  const [count, setCount] = useState(8);
  const [maxTokens, setMaxTokens] = useState(64);
  const [inputTokens, setInputTokens] = useState(64);
  const [thinking, setThinking] = useState(false);
  const [schema, setSchema] = useState('');
  const [progress, setProgress] = useState<BenchProgress | null>(null);
  const [runs, setRuns] = useState<BenchRun[]>([]);
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
        setSelected((s) => s ?? out.runs.find((r) => r.state !== 'running')?.id ?? null);
      },
      (err: unknown) => setError(toContractError(err).message),
    );
  }, [transport]);
  useEffect(() => load(), [load]);
  useEffect(
    () =>
      transport.on('bench.progress', (p) => {
        setProgress(p);
        if (p.state !== 'running') {
          setSelected(p.runId);
          load();
        }
      }),
    [transport, load],
  );
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

  const start = (e: React.FormEvent): void => {
    e.preventDefault();
    setError(null);
    let responseFormat: { schema: Record<string, unknown> } | undefined;
    if (schema.trim()) {
      try {
        responseFormat = { schema: JSON.parse(schema) as Record<string, unknown> };
      } catch (err) {
        setError(`schema is not JSON: ${(err as Error).message}`);
        return;
      }
    }
    const parsedLevels = levels.split(',').map((x) => Number(x.trim()));
    transport
      .invoke('bench.start', {
        scenario: {
          name,
          target: { kind: 'proxy', model, class: cls },
          prompts: { kind: 'synthetic', inputTokens },
          maxTokens,
          thinking,
          levels: parsedLevels,
          perLevel: { kind: 'requests', count },
          ...(responseFormat ? { responseFormat } : {}),
        },
      })
      .then(
        (out) => setProgress({ runId: out.runId, name, state: 'running', phase: 'level', level: null, levelIndex: 0, levelCount: parsedLevels.length, done: 0, total: 0, errors: 0, elapsedMs: 0, etaMs: null, message: null }),
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
      <form className="panel bench-form" onSubmit={start} data-testid="bench-form" style={{ display: 'flex', flexWrap: 'wrap', gap: 8, alignItems: 'end' }}>
        <label>
          Name <input value={name} onChange={(e) => setName(e.target.value)} data-testid="bench-name" required />
        </label>
        <label>
          Model (via proxy) <input value={model} onChange={(e) => setModel(e.target.value)} data-testid="bench-model" required />
        </label>
        <label>
          Class
          <select value={cls} onChange={(e) => setCls(e.target.value as 'system' | 'batch')} data-testid="bench-class">
            <option value="batch">batch</option>
            <option value="system">system</option>
          </select>
        </label>
        <label>
          Concurrency levels <input value={levels} onChange={(e) => setLevels(e.target.value)} data-testid="bench-levels" size={10} />
        </label>
        <label>
          Requests/level <input type="number" min={1} value={count} onChange={(e) => setCount(Number(e.target.value))} data-testid="bench-count" style={{ width: 64 }} />
        </label>
        <label>
          Input tokens <input type="number" min={1} value={inputTokens} onChange={(e) => setInputTokens(Number(e.target.value))} style={{ width: 72 }} />
        </label>
        <label>
          max_tokens <input type="number" min={1} value={maxTokens} onChange={(e) => setMaxTokens(Number(e.target.value))} data-testid="bench-max-tokens" style={{ width: 72 }} />
        </label>
        <label>
          <input type="checkbox" checked={thinking} onChange={(e) => setThinking(e.target.checked)} /> thinking
        </label>
        <label style={{ flexBasis: '100%' }}>
          response_format JSON Schema (optional)
          <textarea value={schema} onChange={(e) => setSchema(e.target.value)} rows={2} style={{ width: '100%' }} data-testid="bench-schema" placeholder='{"type":"object","required":["status"]}' />
        </label>
        <button type="submit" className="button button--primary" disabled={running} data-testid="bench-start">
          Start
        </button>
      </form>
      {error ? (
        <p className="error" role="alert" data-testid="bench-error">
          {error}
        </p>
      ) : null}
      {notice ? <p role="status">{notice}</p> : null}
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
        <table className="data-table" data-testid="bench-runs">
          <thead>
            <tr>
              <th>show</th>
              <th>compare with</th>
              <th>name</th>
              <th>model</th>
              <th>state</th>
              <th>started</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id}>
                <td>
                  <input type="radio" name="bench-run" checked={selected === r.id} onChange={() => setSelected(r.id)} aria-label={`show ${r.name}`} />
                </td>
                <td>
                  <input type="radio" name="bench-other" checked={other === r.id} onChange={() => setOther(r.id)} aria-label={`compare with ${r.name}`} data-testid="bench-compare-with" />
                </td>
                <td>
                  {r.name}
                  {r.baseline ? ' ★ baseline' : ''}
                </td>
                <td>{r.model ?? '—'}</td>
                <td>{r.state}</td>
                <td>{new Date(r.startedAt).toLocaleTimeString()}</td>
                <td>
                  <button type="button" className="button button--ghost" onClick={() => void act(transport.invoke('bench.setBaseline', { runId: r.id }), `${r.name} is the baseline of ${r.model ?? 'its model'}`)}>
                    Baseline
                  </button>
                  <button type="button" className="button button--ghost" onClick={() => download(r.id, 'json')}>
                    JSON
                  </button>
                  <button type="button" className="button button--ghost" onClick={() => download(r.id, 'markdown')}>
                    Markdown
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {run ? (
        <div className="panel">
          <h3 className="panel__title">
            {run.name} — {run.state}
            {run.note ? ` (${run.note})` : ''}
          </h3>
          <RunTable run={run} />
          <p className="muted">
            Peaks while running: VRAM {num(run.peaks.vramMiB, 0)} MiB · GPU {num(run.peaks.gpuUtilPct, 0)}% · power {num(run.peaks.powerW, 0)} W · KV {num(run.peaks.kvCachePct, 1)}%
          </p>
          {evaluation ? (
            <dl className="bench-eval" data-testid="bench-eval" style={{ display: 'grid', gridTemplateColumns: 'repeat(4, 1fr)', gap: 8 }}>
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
          ) : null}
        </div>
      ) : null}
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
