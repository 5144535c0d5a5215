// The Benchmarks form's state and its mapping to and from a scenario. The form
// edits the common fields; a loaded scenario keeps everything it does not show
// (a tunnel or URL target, open-loop mode, a duration per level, warm-up,
// stability loop, extra body fields, a prompt file path) so that saving it back
// changes only what was edited.
import type { BenchScenario, BenchScenarioInput } from '../../../../src-preload/contract/index.js';

export interface ScenarioForm {
  name: string;
  model: string;
  cls: 'system' | 'batch';
  levels: string;
  count: number;
  maxTokens: number;
  inputTokens: number;
  thinking: boolean;
  schema: string;
  /** `jsonl`: inline text read from a chosen file; `kept`: the loaded scenario's own source (a path, on the console's machine). */
  promptMode: 'synthetic' | 'jsonl' | 'kept';
  jsonl: { text: string; filename: string } | null;
}

export const DEFAULT_FORM: ScenarioForm = {
  name: 'sweep',
  model: 'qwen',
  cls: 'batch',
  levels: '1,2,4,8',
  count: 8,
  maxTokens: 64,
  inputTokens: 64,
  thinking: false,
  schema: '',
  promptMode: 'synthetic',
  jsonl: null,
};

export function formFromScenario(s: BenchScenario): ScenarioForm {
  const p = s.prompts;
  return {
    name: s.name,
    model: 'model' in s.target && s.target.model ? s.target.model : '',
    cls: s.target.kind === 'proxy' ? s.target.class : s.target.kind === 'url' && s.target.class ? s.target.class : 'batch',
    levels: s.levels.join(','),
    count: s.perLevel.kind === 'requests' ? s.perLevel.count : DEFAULT_FORM.count,
    maxTokens: s.maxTokens,
    inputTokens: p.kind === 'synthetic' ? p.inputTokens : DEFAULT_FORM.inputTokens,
    thinking: s.thinking,
    schema: s.responseFormat ? JSON.stringify(s.responseFormat.schema) : '',
    promptMode: p.kind === 'synthetic' ? 'synthetic' : p.kind === 'inline' ? 'jsonl' : 'kept',
    jsonl: p.kind === 'inline' ? { text: p.text, filename: p.filename ?? 'inline JSONL' } : null,
  };
}

/** The scenario to send, or an error message naming the field. `base` is the loaded scenario, if any. */
export function scenarioFromForm(f: ScenarioForm, base: BenchScenario | null): { scenario: BenchScenarioInput } | { error: string } {
  let responseFormat: BenchScenario['responseFormat'];
  if (f.schema.trim()) {
    try {
      const schema = JSON.parse(f.schema) as unknown;
      if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { error: 'response_format schema must be a JSON object' };
      responseFormat = { ...(base?.responseFormat ?? {}), schema: schema as Record<string, unknown> };
    } catch (err) {
      return { error: `schema is not JSON: ${(err as Error).message}` };
    }
  }
  const levels = f.levels.split(',').map((x) => x.trim()).filter((x) => x !== '').map(Number);
  if (levels.length === 0 || levels.some((l) => !Number.isFinite(l))) return { error: 'levels: a comma-separated list of numbers, e.g. 1,2,4,8' };
  let prompts: BenchScenarioInput['prompts'];
  if (f.promptMode === 'jsonl') {
    if (!f.jsonl) return { error: 'prompts: choose a JSONL file' };
    prompts = { kind: 'inline', text: f.jsonl.text, filename: f.jsonl.filename };
  } else if (f.promptMode === 'kept' && base) prompts = base.prompts;
  else prompts = { kind: 'synthetic', inputTokens: f.inputTokens };
  const t = base?.target;
  const target: BenchScenarioInput['target'] =
    t?.kind === 'tunnel' ? { ...t, ...(f.model ? { model: f.model } : {}) } : t?.kind === 'url' ? { ...t, model: f.model, class: f.cls } : { kind: 'proxy', model: f.model, class: f.cls };
  const rest: Partial<BenchScenario> = { ...(base ?? {}) };
  delete rest.responseFormat;
  return {
    scenario: {
      ...rest,
      name: f.name,
      target,
      prompts,
      maxTokens: f.maxTokens,
      thinking: f.thinking,
      levels,
      perLevel: base && base.perLevel.kind !== 'requests' ? base.perLevel : { kind: 'requests', count: f.count },
      ...(responseFormat ? { responseFormat } : {}),
    },
  };
}

/** `[from, to]` of the last `minutes` before `now`. */
export function windowOf(minutes: number, now: number): { fromMs: number; toMs: number } {
  return { fromMs: now - minutes * 60_000, toMs: now };
}

export const WINDOWS: { minutes: number; label: string }[] = [
  { minutes: 15, label: 'last 15 min' },
  { minutes: 60, label: 'last 1 h' },
  { minutes: 1440, label: 'last 24 h' },
];
