// Shared primitives every capability uses: errors with codes, disposables,
// events, an injectable clock, backoff, deadlines and a redacting logger.
export * from './errors.js';
export * from './disposable.js';
export * from './events.js';
export * from './clock.js';
export * from './log.js';
export * from './backoff.js';
export * from './async.js';
export * from './actor.js';
