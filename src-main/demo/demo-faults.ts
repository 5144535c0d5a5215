// The demo fleet's fault knobs as the command line names them (`serve
// --demo-fault`, `demo-fleet --fault`), and the faults the built-in fleet
// starts with so that a new user sees a failure diagnosed end to end (issue
// #29 item 8): on tri-gpu, an OCR engine core crashed with Xid 13 on GPU 2 a
// few minutes ago and a leftover engine process still holds 9.1 GiB there.
// Every other host stays healthy.

import { AppError } from '../core/base/index.js';
import { DemoErrorCode } from './errors.js';
import { DEMO_XIDS } from './gpu-faults.js';
import type { DemoHostHandle } from './demo-host.js';

export type DemoFault =
  | { host: string; kind: 'xid'; xid: number; gpuIndex: number; agoSec?: number }
  | { host: string; kind: 'throttle'; gpuIndex: number }
  | { host: string; kind: 'disk-full' }
  | { host: string; kind: 'ghost'; serviceId: string; onPort: boolean }
  | { host: string; kind: 'oom'; serviceId: string }
  | { host: string; kind: 'link-cut' }
  | { host: string; kind: 'stopped'; serviceId: string };

export const DEMO_FAULT_SYNTAX = [
  'HOST:xid=N@gpuI        the NVIDIA driver logs Xid N for GPU I (N: ' + DEMO_XIDS.join(', ') + ')',
  'HOST:throttle@gpuI     GPU I overheats: HW thermal slowdown (AMD: past its critical temperature)',
  'HOST:disk-full         / down to 8.0 GiB free',
  'HOST:ghost@SERVICE     a leftover process of the service holds 9.1 GiB on its GPU and listens on its port',
  'HOST:ghost=memory@SERVICE   the same, holding GPU memory only',
  'HOST:oom@SERVICE       each restart of the service ends in CUDA out of memory',
  'HOST:link-cut          the network to the host is cut (SSH never answers) until the fleet stops',
  'HOST:stopped@SERVICE   the service\'s server is stopped (down) until it is restarted',
  'none                   start without the built-in faults',
].join('\n');

/** The built-in fleet's faults (a fleet started with other hosts gets none unless asked). */
export const DEFAULT_DEMO_FAULTS: readonly DemoFault[] = [
  { host: 'tri-gpu', kind: 'ghost', serviceId: 'ocr', onPort: false },
  { host: 'tri-gpu', kind: 'xid', xid: 13, gpuIndex: 2, agoSec: 240 },
];

const bad = (spec: string, why: string) =>
  new AppError(DemoErrorCode.BAD_OPTIONS, `demo fault "${spec}": ${why}; the forms are:\n${DEMO_FAULT_SYNTAX}`, { details: { spec } });

/** One `--fault` value; `none` is null. Throws DEMO_BAD_OPTIONS naming what is wrong. */
export function parseDemoFault(spec: string): DemoFault | null {
  if (spec.trim() === 'none') return null;
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]{0,63}):([a-z-]+)(?:=([a-z0-9]+))?(?:@([A-Za-z0-9._-]+))?$/.exec(spec.trim());
  if (!m) throw bad(spec, 'not of the form HOST:KIND[=VALUE][@TARGET]');
  const [, host, kind, value, target] = m as unknown as [string, string, string, string | undefined, string | undefined];
  const gpu = () => {
    const g = /^gpu(\d{1,2})$/.exec(target ?? '');
    if (!g) throw bad(spec, `${kind} needs @gpuI (e.g. @gpu0)`);
    return Number(g[1]);
  };
  const service = () => {
    if (target === undefined) throw bad(spec, `${kind} needs @SERVICE (a service id of ${host})`);
    return target;
  };
  switch (kind) {
    case 'xid': {
      const xid = Number(value);
      if (!DEMO_XIDS.includes(xid)) throw bad(spec, `the demo raises Xid ${DEMO_XIDS.join(', ')}, got "${value ?? ''}"`);
      return { host, kind, xid, gpuIndex: gpu() };
    }
    case 'throttle':
      return { host, kind, gpuIndex: gpu() };
    case 'disk-full':
      return { host, kind };
    case 'ghost':
      if (value !== undefined && value !== 'memory') throw bad(spec, `ghost takes =memory or nothing, got "=${value}"`);
      return { host, kind, serviceId: service(), onPort: value === undefined };
    case 'oom':
    case 'stopped':
      return { host, kind, serviceId: service() };
    case 'link-cut':
      if (value !== undefined || target !== undefined) throw bad(spec, 'link-cut takes no value or target');
      return { host, kind };
    default:
      throw bad(spec, `unknown fault "${kind}"`);
  }
}

/** `--fault` values → the faults to start with; no value: `defaults`; `none` alone: none. */
export function demoFaultsOf(specs: readonly string[] | undefined, defaults: readonly DemoFault[]): DemoFault[] {
  if (specs === undefined || specs.length === 0) return [...defaults];
  return specs.map(parseDemoFault).filter((f): f is DemoFault => f !== null);
}

/** Sets each fault on its host. Throws DEMO_UNKNOWN_HOST / DEMO_UNKNOWN_SERVICE / DEMO_BAD_OPTIONS. */
export function applyDemoFaults(hostOf: (label: string) => DemoHostHandle, faults: readonly DemoFault[], nowMs: number): void {
  const ghosts = new Map<string, number>();
  for (const f of faults) {
    const h = hostOf(f.host);
    if (f.kind === 'ghost') {
      const pid = h.setGhostProcess(f.serviceId, true, { onPort: f.onPort });
      if (pid !== null) ghosts.set(f.host, pid);
    } else if (f.kind === 'xid') {
      // The process the driver names is the host's ghost when there is one: the crash it left behind.
      const pid = ghosts.get(f.host);
      h.raiseXid({ gpuIndex: f.gpuIndex, xid: f.xid, process: pid !== undefined ? { pid, name: 'VLLM::EngineCor' } : null, atMs: nowMs - (f.agoSec ?? 0) * 1000 });
    } else if (f.kind === 'throttle') h.setThermalThrottle(f.gpuIndex, true);
    else if (f.kind === 'disk-full') h.setDiskFull(true);
    else if (f.kind === 'link-cut') h.setLinkCut(true);
    else if (f.kind === 'stopped') h.stopService(f.serviceId);
    else h.setOomOnRestart(f.serviceId, true);
  }
}
