// Contract handlers of the bench capability (channels in src-preload/contract/bench.ts).
import type { benchInvokeChannels } from '../../../src-preload/contract/index.js';
import type { App } from '../app.js';
import { AppError } from '../base/index.js';
import { BenchErrorCode, compareRuns, exportJson, markdownTable } from '../bench/index.js';
import type { HandlersFor } from './types.js';

export function benchHandlers(app: App): HandlersFor<keyof typeof benchInvokeChannels> {
  const b = () => app.bench;
  return {
    'bench.listScenarios': () => ({ scenarios: b().repo.listScenarios() }),
    'bench.saveScenario': ({ id, scenario }) => b().repo.saveScenario(scenario, id),
    'bench.deleteScenario': ({ id }) => {
      b().repo.deleteScenario(id);
      return { id };
    },
    'bench.check': async ({ scenario }, ctx) => {
      const p = await b().prepare(scenario, app.proxy, ctx.caller);
      p.target.release();
      return { prompts: p.prompts.length, upstream: p.target.upstream };
    },
    'bench.start': async ({ scenario, scenarioId }, ctx) => {
      const s = scenario ?? (scenarioId ? b().repo.getScenario(scenarioId).scenario : null);
      if (!s) throw new AppError(BenchErrorCode.INVALID_SCENARIO, 'send a scenario or the id of a saved one');
      // A scenario saved before prompt files were refused over the bridge: the console reads no path named here.
      if (s.prompts.kind === 'jsonl') {
        throw new AppError(BenchErrorCode.PROMPT_FILE_NOT_ALLOWED, `this saved scenario reads ${s.prompts.file} on the console; load the file in the Benchmarks view (sent inline) and save it again`);
      }
      return { runId: await b().start(s, app.proxy, ctx.caller) };
    },
    'bench.cancel': ({ runId }) => ({ runId, cancelled: b().service.cancel(runId) }),
    'bench.listRuns': ({ limit }) => ({ runs: b().repo.listRuns(limit) }),
    'bench.getRun': ({ runId }) => ({ run: b().repo.getRun(runId), requests: b().repo.requests(runId) }),
    'bench.deleteRun': ({ runId }) => {
      b().repo.deleteRun(runId);
      return { runId };
    },
    'bench.setBaseline': ({ runId }, ctx) => {
      const run = b().repo.getRun(runId);
      // The steady figure: the stability loop when there is one, else the best complete level.
      const steady = run.levels.find((l) => l.phase === 'stability' && !l.partial && l.outputTokPerS !== null);
      const best = [...run.levels].filter((l) => !l.partial && l.outputTokPerS !== null).sort((x, y) => y.outputTokPerS! - x.outputTokPerS!)[0];
      const pick = steady ?? best;
      if (!pick || !run.model) {
        throw new AppError(BenchErrorCode.NO_BASELINE_FIGURE, 'this run has no complete level with a throughput figure, or no known model');
      }
      b().repo.markBaseline(run);
      app.telemetry.setBaseline(run.model, pick.outputTokPerS!, 'benchmark', app.operatorActor(ctx.caller));
      return { runId, model: run.model, host: run.host, tokPerS: pick.outputTokPerS!, level: pick.level };
    },
    'bench.compare': ({ a, b: bId }) => {
      const ra = b().repo.getRun(a);
      const rb = b().repo.getRun(bId);
      return { a: ra, b: rb, rows: compareRuns(ra, rb) };
    },
    'bench.export': ({ runId, format }) => {
      const run = b().repo.getRun(runId);
      const stem = `bench-${run.name.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 60)}-${run.id}`;
      return format === 'json'
        ? { filename: `${stem}.json`, mime: 'application/json', text: exportJson(run, b().repo.requests(runId)) }
        : { filename: `${stem}.md`, mime: 'text/markdown', text: markdownTable(run) };
    },
    'bench.importGuidellm': ({ text, name }, ctx) => b().importGuidellm(text, name, ctx.caller),
    'bench.evaluate': ({ source }) =>
      source.kind === 'run' ? b().evaluateRun(source.runId) : b().evaluateWindow(source.fromMs, source.toMs, source.model),
  };
}
