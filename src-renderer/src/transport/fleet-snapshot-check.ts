// A hand-written structural check for the hot `fleet.tick` payload (64 hosts ×
// 8 GPUs once a second): the same rules as FleetSnapshotSchema (strict objects,
// enums, nullable/optional fields, finite numbers, safe integers), without
// zod's per-node allocations. It only accepts; anything it does not accept is
// handed to zod, which rejects it and writes the message. Kept in step with
// src-preload/contract/fleet.ts by test/unit/renderer/fleet-snapshot-check.test.ts.
import type { FleetSnapshot } from '../../../src-preload/contract/index.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const int = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v);
const str = (v: unknown): boolean => typeof v === 'string';
const bool = (v: unknown): boolean => typeof v === 'boolean';
const nullable =
  (check: (v: unknown) => boolean) =>
  (v: unknown): boolean =>
    v === null || check(v);
const oneOf = (...values: string[]): ((v: unknown) => boolean) => {
  const set = new Set(values);
  return (v) => typeof v === 'string' && set.has(v);
};
const arrayOf =
  (check: (v: unknown) => boolean) =>
  (v: unknown): boolean => {
    if (!Array.isArray(v)) return false;
    for (const item of v) if (!check(item)) return false;
    return true;
  };

/** Strict object: every own key is known, required keys are present, optional ones may be absent. */
function strictObject(required: Record<string, (v: unknown) => boolean>, optional: Record<string, (v: unknown) => boolean> = {}): (v: unknown) => boolean {
  const requiredKeys = Object.keys(required);
  return (v) => {
    if (!isObj(v)) return false;
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) return false;
    let known = 0;
    for (const key of requiredKeys) {
      if (!(key in v) || !required[key]!(v[key])) return false;
      known++;
    }
    for (const key in v) {
      if (Object.hasOwn(required, key)) continue;
      const check = Object.hasOwn(optional, key) ? optional[key] : undefined;
      // zod treats an optional key set to undefined as absent; JSON never produces one
      if (check === undefined || (v[key] !== undefined && !check(v[key]))) return false;
      known++;
    }
    return known === Object.keys(v).length;
  };
}

const hostState = oneOf('disconnected', 'connecting', 'awaiting-trust', 'connected', 'reconnecting', 'failed');
const tunnelState = oneOf('idle', 'connecting', 'up', 'degraded', 'reconnecting', 'failed', 'closed');
const errorSummary = strictObject({ code: str, message: str, at: num });
const codedMessage = strictObject({ code: str, message: str });
const tunnelProbe = strictObject({ ok: bool, at: num, latencyMs: num, error: nullable(codedMessage) });
const tunnelTestStep = strictObject({ name: oneOf('models', 'chat'), ok: bool, status: nullable(int), latencyMs: num, detail: str });
const tunnelTestResult = strictObject({
  ok: bool,
  at: num,
  totalMs: num,
  localUrl: nullable(str),
  steps: arrayOf(tunnelTestStep),
  error: nullable(codedMessage),
});
const hostKeyProblem = strictObject({
  status: oneOf('unknown', 'changed', 'revoked'),
  role: oneOf('host', 'jump'),
  endpoint: str,
  keyType: str,
  fingerprint: str,
  knownFingerprints: arrayOf(str),
  knownSource: nullable(oneOf('known_hosts', 'console')),
});
const credentialPrompt = strictObject({ kind: oneOf('passphrase'), keyFile: str, reason: oneOf('required', 'incorrect') });
const gpuView = strictObject({
  index: int,
  uuid: nullable(str),
  name: str,
  memoryUsedMiB: nullable(num),
  memoryTotalMiB: nullable(num),
  utilizationPct: nullable(num),
  powerW: nullable(num),
  powerLimitW: nullable(num),
  temperatureC: nullable(num),
});
const tunnel = strictObject(
  { state: tunnelState, localUrl: nullable(str), lastError: nullable(errorSummary) },
  { lastProbe: nullable(tunnelProbe), lastTest: nullable(tunnelTestResult), nextRetryAt: nullable(num) },
);
const serviceView = strictObject({
  id: str,
  kind: oneOf('vllm', 'llama-server'),
  model: str,
  aliases: arrayOf(str),
  slots: int,
  remotePort: int,
  tunnel,
  health: oneOf('ok', 'down', 'unknown'),
  sleep: oneOf('awake', 'asleep-1', 'asleep-2', 'unknown'),
  requestsRunning: nullable(num),
  requestsWaiting: nullable(num),
  kvCachePct: nullable(num),
  generationTokensPerS: nullable(num),
  promptTokensPerS: nullable(num),
  stale: bool,
  staleReason: nullable(str),
});
const hostView = strictObject(
  {
    label: str,
    address: str,
    state: hostState,
    lastError: nullable(errorSummary),
    nextRetryAt: nullable(num),
    hostKeyFingerprint: nullable(str),
    gpuModel: nullable(str),
    pricePerHourUsd: nullable(num),
    gpus: arrayOf(gpuView),
    gpuStale: bool,
    gpuStaleReason: nullable(str),
    services: arrayOf(serviceView),
    updatedAt: nullable(num),
  },
  { hostKey: nullable(hostKeyProblem), credentialPrompt: nullable(credentialPrompt), jumpHost: nullable(str) },
);
const fleetSnapshot = strictObject({ at: num, hosts: arrayOf(hostView) });

/** True only for values FleetSnapshotSchema accepts unchanged; false means "ask zod". */
export function isFleetSnapshot(value: unknown): value is FleetSnapshot {
  return fleetSnapshot(value);
}
