// `gpu-console bench run --scenario FILE [--target URL]`: runs a benchmark
// standalone — in this process, against an OpenAI-compatible URL (the
// console's proxy URL with a token in GPU_CONSOLE_TOKEN, or a tunnel's local
// URL) — and prints a progress line and the field-notes table. It needs no
// running console and writes nothing to its database. Exit codes: 0 done, 1
// when the share of failed requests is above --max-error-rate (default 0), the
// target is unreachable or the run was cancelled; 2 for bad input found before
// the run starts (arguments, scenario, prompt file — a broken JSONL line is
// named `file:line` —, response_format schema).
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { BenchScenarioSchema, BenchTargetSchema, type BenchRun, type BenchScenario } from '../../../src-preload/contract/index.js';
import { compileSchema, loadPrompts, markdownTable, plannedRequests, runBenchmark } from '../../core/bench/index.js';
import { toAppError } from '../../core/base/index.js';
import { UpstreamClient } from '../../core/upstream/index.js';
import { EXIT, UsageError, shown, type Output } from '../output.js';
import type { CliCommand } from './types.js';

const USAGE = 'usage: gpu-console bench run --scenario FILE [--target URL] [--model NAME] [--max-error-rate R] [--json]';

async function readScenario(file: string): Promise<BenchScenario> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read scenario ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = /\.ya?ml$/i.test(file) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file}: ${(err as Error).message}`);
  }
  const parsed = BenchScenarioSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(scenario)'}: ${i.message}`);
    throw new UsageError(`${file} is not a valid scenario:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

const run: CliCommand = {
  name: 'bench run',
  help: `  bench run --scenario FILE [--target URL] [--model NAME] [--max-error-rate R]
                        Run a benchmark scenario (JSON or YAML) against an OpenAI-compatible URL
                        (proxy URL + GPU_CONSOLE_TOKEN, or a tunnel); prints progress and the table.
                        Exits 1 when failed ÷ settled requests exceeds R (default 0) or the target is
                        unreachable; 2 on bad input before the run (scenario, prompt file with its
                        line number, schema).`,
  async run(args: string[], output: Output): Promise<number> {
    let values: Record<string, string | boolean | undefined>;
    try {
      ({ values } = parseArgs({
        args,
        options: {
          scenario: { type: 'string' },
          target: { type: 'string' },
          model: { type: 'string' },
          'max-error-rate': { type: 'string' },
          json: { type: 'boolean', default: false },
        },
        strict: true,
      }));
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    if (typeof values.scenario !== 'string') throw new UsageError(USAGE);
    const maxErrorRate = values['max-error-rate'] === undefined ? 0 : Number(values['max-error-rate']);
    if (!(maxErrorRate >= 0 && maxErrorRate <= 1)) throw new UsageError('--max-error-rate must be a number between 0 and 1');
    let scenario = await readScenario(values.scenario);
    if (typeof values.target === 'string') {
      const model = typeof values.model === 'string' ? values.model : 'model' in scenario.target && scenario.target.model ? scenario.target.model : undefined;
      if (!model) throw new UsageError('--target needs --model NAME (the scenario names none)');
      const cls = scenario.target.kind === 'proxy' || scenario.target.kind === 'url' ? scenario.target.class : undefined;
      const target = BenchTargetSchema.safeParse({ kind: 'url', baseUrl: values.target, model, ...(cls ? { class: cls } : {}) });
      if (!target.success) throw new UsageError(`--target ${values.target}: ${target.error.issues[0]?.message ?? 'not a URL'}`);
      scenario = { ...scenario, target: target.data };
    }
    if (scenario.target.kind !== 'url') {
      throw new UsageError(
        `the scenario targets ${scenario.target.kind === 'proxy' ? `the proxy model ${scenario.target.model}` : `the tunnel ${scenario.target.host}/${scenario.target.serviceId}`}; ` +
          'standalone runs need a URL: pass --target http://127.0.0.1:PORT/v1 (the Proxy view shows it; put a token in GPU_CONSOLE_TOKEN), or start it from the Benchmarks view',
      );
    }
    const target = scenario.target;
    let schema: ReturnType<typeof compileSchema> | null;
    let prompts: Awaited<ReturnType<typeof loadPrompts>>;
    try {
      schema = scenario.responseFormat ? compileSchema(scenario.responseFormat.schema) : null;
      prompts = await loadPrompts(scenario.prompts, plannedRequests(scenario) ?? 64);
    } catch (err) {
      const e = toAppError(err);
      output.err(`error ${e.code}: ${shown(e.message)}`);
      return EXIT.USAGE;
    }
    try {
      const headers: Record<string, string> = {};
      if (process.env.GPU_CONSOLE_TOKEN) headers.authorization = `Bearer ${process.env.GPU_CONSOLE_TOKEN}`;
      if (target.class) headers['x-priority'] = target.class;
      const base = target.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
      // The target's client: the keep-alive rule and the one retry of the console's own calls (the
      // contract takes loopback URLs only, so there is no on-prem question left to ask).
      const client = UpstreamClient.forUrl(base, { onPrem: null, purpose: 'probe' });
      try {
        const res = await client.request({ path: '/v1/models', headers, deadlineMs: 5_000, maxBodyBytes: 64 * 1024, overflow: 'truncate' });
        if (res.status >= 400) throw new Error(`answered ${res.status}: ${res.text.slice(0, 200)}`);
      } catch (err) {
        // The message quotes what the target answered.
        await client.destroy();
        output.err(`error BENCH_TARGET_UNREACHABLE: ${shown(base)}/v1/models: ${shown((err as Error).message)}`);
        return EXIT.FAILED;
      }
      const controller = new AbortController();
      const onSigint = () => controller.abort();
      process.once('SIGINT', onSigint);
      const startedAt = Date.now();
      const tty = !output.json && process.stderr.isTTY;
      const result = await runBenchmark({
        scenario,
        prompts,
        endpoint: { client, path: '/v1/chat/completions', headers, model: target.model },
        schema,
        signal: controller.signal,
        now: () => performance.now(),
        onProgress: (p) => {
          if (output.json) return;
          const line = `${p.phase}${p.level !== null ? ` level ${p.level}` : ''}  ${p.done}/${p.total || '?'} requests  ${p.errors} errors  elapsed ${(p.elapsedMs / 1000).toFixed(1)} s  ETA ${p.etaMs === null ? '?' : `${(p.etaMs / 1000).toFixed(1)} s`}`;
          if (tty) process.stderr.write(`\r${line.padEnd(100)}`);
        },
      });
      process.removeListener('SIGINT', onSigint);
      await client.destroy();
      if (tty) process.stderr.write('\n');
      const runView: BenchRun = {
        id: 'cli',
        name: scenario.name,
        state: result.cancelled ? 'cancelled' : 'completed',
        source: 'cli',
        scenario,
        upstream: null,
        host: null,
        model: target.model,
        slots: null,
        startedAt,
        finishedAt: Date.now(),
        levels: result.levels,
        peaks: { vramMiB: null, gpuUtilPct: null, powerW: null, kvCachePct: null, samples: 0 },
        baseline: false,
        error: null,
        note: null,
      };
      const settled = result.levels.reduce((n, l) => n + l.completed + l.failed, 0);
      const failed = result.levels.reduce((n, l) => n + l.failed, 0);
      const rate = settled ? failed / settled : 0;
      if (output.json) output.out(JSON.stringify({ run: runView, errorRate: rate }));
      else {
        output.err(`done: ${settled} settled, ${failed} failed (${(rate * 100).toFixed(1)}%)`);
        output.out(markdownTable(runView));
      }
      if (result.cancelled) return EXIT.FAILED;
      return rate > maxErrorRate ? EXIT.FAILED : EXIT.OK;
    } catch (err) {
      const e = toAppError(err);
      output.err(`error ${e.code}: ${shown(e.message)}`);
      return EXIT.FAILED;
    }
  },
};

export const benchCommands: CliCommand[] = [run];
