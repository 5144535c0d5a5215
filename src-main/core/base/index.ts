// Shared primitives every capability uses: errors with codes, disposables,
// events, an injectable clock, backoff, deadlines, a redacting logger, and the
// on-prem guard every outbound call site asks.
export * from './errors.js';
export * from './cancellation.js';
export * from './disposable.js';
export * from './events.js';
export * from './clock.js';
export * from './log.js';
export * from './backoff.js';
export * from './async.js';
export * from './actor.js';
export * from './on-prem.js';
export * from './control-chars.js';
export * from './secret-text.js';
