// The eval capability: evaluation figures (field-notes §5) over benchmark runs
// and windows of proxy traffic, each with its formula; unavailable, never 0,
// where the data does not allow the figure.
export { evaluate, evaluateColumns, sampleColumns, UNSTABLE_BELOW, type EvalColumns, type EvalColumnsInput, type EvalInput, type EvalSample } from './evaluate.js';
