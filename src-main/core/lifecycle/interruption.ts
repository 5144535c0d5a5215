// How far an action got, step by step, and what is left of it when the console
// stopped in the middle: each planned step's progress is saved before and
// after it runs, so the next start can say which calls were made, which one
// was under way (sent, outcome unknown) and which never ran. An interrupted
// action is closed, never resumed: a person reads the service's real state
// (Verify now) and decides.
import type { ActionView, Interruption, StepProgress } from '../../../src-preload/contract/index.js';

/** The error line an interrupted action carries (history, CLI, reports). */
export const INTERRUPTED_TEXT = 'the console stopped while this action was running; it was not resumed and its outcome was not verified: check the service (Verify now) and decide';

/** Every planned step not started yet (the run's first save). */
export const freshProgress = (view: ActionView): StepProgress[] => view.steps.map(() => 'not-started');

/** `view`'s step progress with planned step `index` set to `p` (a missing or short list is filled first). */
export function withStep(view: ActionView, index: number, p: StepProgress): { stepProgress: StepProgress[] } {
  const out = view.steps.map((_, i) => view.stepProgress?.[i] ?? 'not-started');
  if (index >= 0 && index < out.length) out[index] = p;
  return { stepProgress: out };
}

/** Where the run's parts sit in `view.steps`: the drain (none on wake), the calls in order, the verification. */
export function stepIndexes(view: ActionView): { drain: number; calls: number[]; verify: number } {
  const calls: number[] = [];
  view.steps.forEach((s, i) => {
    if (s.kind === 'http' || s.kind === 'ssh') calls.push(i);
  });
  return { drain: view.steps.findIndex((s) => s.kind === 'drain'), calls, verify: view.steps.findIndex((s) => s.kind === 'verify') };
}

const OUTCOME: Record<StepProgress, Interruption['steps'][number]['outcome']> = {
  'not-started': 'not-run',
  started: 'unknown',
  done: 'done',
  failed: 'failed',
};

/** What an action left open (approved or running) looks like to the next start. */
export function interruptionOf(view: ActionView, detectedAt: number): Interruption {
  return {
    detectedAt,
    wasState: view.state === 'approved' ? 'approved' : 'running',
    lastProgress: view.progress,
    steps: view.steps.map((s, i) => ({ kind: s.kind, text: s.text, outcome: OUTCOME[view.stepProgress?.[i] ?? 'not-started'] })),
    check: null,
  };
}

/** The steps by outcome, as the audit row and the notice word them. */
export function interruptionSummary(i: Interruption): { done: string[]; unknown: string[]; failed: string[]; notRun: string[] } {
  const of = (o: Interruption['steps'][number]['outcome']) => i.steps.filter((s) => s.outcome === o).map((s) => s.text);
  return { done: of('done'), unknown: of('unknown'), failed: of('failed'), notRun: of('not-run') };
}
