// The bench capability: scenarios, a closed/open-loop load generator with exact
// per-request timing, structured-output checks against a JSON Schema, stored
// runs with baselines, comparison, JSON/Markdown export and GuideLLM import.
export { BenchErrorCode, RequestErrorCode } from './errors.js';
export { nearestRank, STABLE_P95_SAMPLES } from './percentile.js';
export { loadPrompts, parseJsonl, syntheticPrompts, type BenchPrompt } from './prompts.js';
export { compileSchema, resolvePointer, type CompiledSchema, type SchemaCheck } from './schema-check.js';
export { runRequest, type RequestOutcome, type RequestSpec } from './http-request.js';
export { levelResult, isCompleted, type RecordedRequest } from './aggregate.js';
export { runBenchmark, buildBody, plannedRequests, type Endpoint, type RunnerOptions, type RunnerProgress, type RunnerResult } from './runner.js';
export { BenchRepository, type ReadRun } from './repository.js';
export { BenchService, type BenchServiceOptions, type Prepared, type ResolvedTarget } from './service.js';
export { NO_PEAKS, peakReadingOf, raisePeaks, type PeakReading } from './peaks.js';
export { exportJson, markdownTable, workloadLabel, EXPORT_SCHEMA } from './export.js';
export { compareRuns } from './compare.js';
export { importGuidellm, type ImportedLevels } from './guidellm.js';
export { ConsoleBench, type ConsoleBenchDeps, type BenchProxyPort, type BaselineSink } from './console-bench.js';
export { benchChannels } from './channels.js';
