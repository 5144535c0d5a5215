// The eval capability: evaluation figures (field-notes §5) over benchmark runs
// and windows of proxy traffic, each with its formula; unavailable, never 0,
// where the data does not allow the figure.
export { evaluate, UNSTABLE_BELOW, type EvalInput, type EvalSample } from './evaluate.js';
