// The contract between the renderer and the core: zod schemas for every call
// and event, the error shape, and the parse helpers used at each boundary.
export * from './errors.js';
export * from './primitives.js';
export * from './fleet.js';
export * from './service-kind.js';
export * from './audit.js';
export * from './channels.js';
export * from './parse.js';
export * from './ssh.js';
export * from './proxy.js';
export * from './proxy-tokens.js';
export * from './proxy-captures.js';
export * from './proxy-clients.js';
export * from './notify.js';
export * from './telemetry.js';
export * from './alerts.js';
export * from './series-names.js';
export * from './lifecycle.js';
export * from './bench.js';
export * from './secrets.js';
export * from './report.js';
export * from './budget.js';
export * from './logs.js';
export * from './advisor.js';
export * from './storage.js';
export * from './playground.js';
export * from './tick-codec.js';
