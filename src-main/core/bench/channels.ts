// Contract channels of the bench capability (src-preload/contract/bench.ts).
import type { benchInvokeChannels } from '../../../src-preload/contract/index.js';
import { AppError } from '../base/index.js';
import type { HandlersFor } from '../channel.js';
import { compareRuns } from './compare.js';
import { exportJson, markdownTable } from './export.js';
import type { ConsoleBench } from './console-bench.js';
import { BenchErrorCode } from './errors.js';

export function benchChannels(bench: ConsoleBench): HandlersFor<keyof typeof benchInvokeChannels> {
  const { repo } = bench;
  return {
    'bench.listScenarios': () => ({ scenarios: repo.listScenarios() }),
    'bench.saveScenario': ({ id, scenario }) => repo.saveScenario(scenario, id),
    'bench.deleteScenario': ({ id }) => {
      repo.deleteScenario(id);
      return { id };
    },
    'bench.check': async ({ scenario }, ctx) => {
      const p = await bench.prepare(scenario, ctx.caller);
      p.target.release();
      return { prompts: p.prompts.length, upstream: p.target.upstream };
    },
    'bench.start': async ({ scenario, scenarioId }, ctx) => {
      const s = scenario ?? (scenarioId ? repo.getScenario(scenarioId).scenario : null);
      if (!s) throw new AppError(BenchErrorCode.INVALID_SCENARIO, 'send a scenario or the id of a saved one');
      // A scenario saved before prompt files were refused over the bridge: the console reads no path named here.
      if (s.prompts.kind === 'jsonl') {
        throw new AppError(BenchErrorCode.PROMPT_FILE_NOT_ALLOWED, `this saved scenario reads ${s.prompts.file} on the console; load the file in the Benchmarks view (sent inline) and save it again`);
      }
      return { runId: await bench.start(s, ctx.caller) };
    },
    'bench.cancel': ({ runId }) => ({ runId, cancelled: bench.service.cancel(runId) }),
    'bench.listRuns': ({ limit }) => repo.listRuns(limit),
    'bench.getRun': ({ runId }) => ({ run: repo.getRun(runId), requests: repo.requests(runId) }),
    'bench.deleteRun': ({ runId }, ctx) => {
      bench.deleteRun(runId, ctx.caller);
      return { runId };
    },
    'bench.setBaseline': ({ runId }, ctx) => bench.setBaseline(runId, ctx.caller),
    'bench.compare': ({ a, b }) => {
      const ra = repo.getRun(a);
      const rb = repo.getRun(b);
      return { a: ra, b: rb, rows: compareRuns(ra, rb) };
    },
    'bench.export': ({ runId, format }) => {
      const run = repo.getRun(runId);
      const stem = `bench-${run.name.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 60)}-${run.id}`;
      return format === 'json'
        ? { filename: `${stem}.json`, mime: 'application/json', text: exportJson(run, repo.requests(runId)) }
        : { filename: `${stem}.md`, mime: 'text/markdown', text: markdownTable(run) };
    },
    'bench.importGuidellm': ({ text, name }, ctx) => bench.importGuidellm(text, name, ctx.caller),
    'bench.evaluate': ({ source }) => (source.kind === 'run' ? bench.evaluateRun(source.runId) : bench.evaluateWindow(source.fromMs, source.toMs, source.model)),
  };
}
