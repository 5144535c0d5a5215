// Channel names without their schemas, for the sandboxed preload (which has
// no business parsing payloads and should stay small). A unit test checks
// that these lists equal the keys of the schema tables in channels.ts.
import { BridgeErrorCode } from './codes.js';

export { BridgeErrorCode };

export const INVOKE_CHANNEL_NAMES = [
  'app.info',
  'fleet.snapshot',
  'hosts.connect',
  'hosts.disconnect',
  'config.reload',
  'audit.list',
  'audit.verify',
] as const;

export const EVENT_CHANNEL_NAMES = ['fleet.tick', 'host.status', 'config.changed'] as const;

export const IPC_INVOKE = 'gpu-console:invoke';
export const IPC_EVENT = 'gpu-console:event';

const invokeSet: ReadonlySet<string> = new Set(INVOKE_CHANNEL_NAMES);
const eventSet: ReadonlySet<string> = new Set(EVENT_CHANNEL_NAMES);

export function isInvokeChannel(name: string): name is (typeof INVOKE_CHANNEL_NAMES)[number] {
  return invokeSet.has(name);
}

export function isEventChannel(name: string): name is (typeof EVENT_CHANNEL_NAMES)[number] {
  return eventSet.has(name);
}
