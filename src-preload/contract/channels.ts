import { z } from 'zod';
import { EmptyInputSchema, HostLabelSchema } from './primitives.js';
import { FleetSnapshotSchema, HostConnectionStateSchema } from './fleet.js';
import { AuditEventViewSchema, AuditVerifyResultSchema } from './audit.js';
import { ContractErrorSchema } from './errors.js';
import { benchEventChannels, benchInvokeChannels } from './bench.js';
import { lifecycleEventChannels, lifecycleInvokeChannels } from './lifecycle.js';
import { notifyEventChannels, notifyInvokeChannels } from './notify.js';
import { proxyEventChannels, proxyInvokeChannels } from './proxy.js';
import { proxyCapturesInvokeChannels } from './proxy-captures.js';
import { proxyClientsInvokeChannels } from './proxy-clients.js';
import { secretsEventChannels, secretsInvokeChannels } from './secrets.js';
import { sshEventChannels, sshInvokeChannels } from './ssh.js';
import { telemetryEventChannels, telemetryInvokeChannels } from './telemetry.js';
import { alertsEventChannels, alertsInvokeChannels } from './alerts.js';
import { reportEventChannels, reportInvokeChannels } from './report.js';
import { budgetInvokeChannels } from './budget.js';
import { logsEventChannels, logsInvokeChannels } from './logs.js';
import { advisorEventChannels, advisorInvokeChannels } from './advisor.js';
import { storageEventChannels, storageInvokeChannels } from './storage.js';
import { playgroundEventChannels, playgroundInvokeChannels } from './playground.js';

// The one table of channels. Calls are `capability.verb`, events
// `capability.noun`. Both bridges (Electron IPC and the web bridge) carry
// exactly these; types are derived from the schemas, never written twice.

const Empty = EmptyInputSchema;
const HostRef = z.object({ label: HostLabelSchema }).strict();

export const AppInfoSchema = z
  .object({
    name: z.literal('GPU Console'),
    version: z.string(),
    mode: z.enum(['electron', 'web']),
    demo: z.boolean(),
    dataDir: z.string(),
    configFile: z.string().nullable(),
    configError: ContractErrorSchema.nullable(),
    proxyUrl: z.string().nullable(),
    startedAt: z.number(),
  })
  .strict();
export type AppInfo = z.infer<typeof AppInfoSchema>;

export const invokeChannels = {
  'app.info': { input: Empty, output: AppInfoSchema },
  'fleet.snapshot': { input: Empty, output: FleetSnapshotSchema },
  'hosts.connect': { input: HostRef, output: z.object({ label: z.string(), state: HostConnectionStateSchema }).strict() },
  'hosts.disconnect': { input: HostRef, output: z.object({ label: z.string(), state: HostConnectionStateSchema }).strict() },
  'config.reload': {
    input: Empty,
    output: z.object({ ok: z.boolean(), error: ContractErrorSchema.nullable() }).strict(),
  },
  'audit.list': {
    input: z
      .object({
        limit: z.number().int().min(1).max(1000).default(100),
        beforeSeq: z.number().int().positive().optional(),
      })
      .strict(),
    output: z.object({ events: z.array(AuditEventViewSchema) }).strict(),
  },
  'audit.verify': { input: Empty, output: AuditVerifyResultSchema },
  ...notifyInvokeChannels,
  ...secretsInvokeChannels,
  ...telemetryInvokeChannels,
  ...alertsInvokeChannels,
  ...sshInvokeChannels,
  ...proxyInvokeChannels,
  ...proxyCapturesInvokeChannels,
  ...proxyClientsInvokeChannels,
  ...lifecycleInvokeChannels,
  ...benchInvokeChannels,
  ...reportInvokeChannels,
  ...budgetInvokeChannels,
  ...logsInvokeChannels,
  ...advisorInvokeChannels,
  ...storageInvokeChannels,
  ...playgroundInvokeChannels,
} as const;

export const eventChannels = {
  /** The whole fleet, once per poll interval (batched: one event per tick, not one per metric). */
  'fleet.tick': FleetSnapshotSchema,
  /** A host's connection state changed (also covered by fleet.tick; this one arrives at once). */
  'host.status': z
    .object({ label: z.string(), state: HostConnectionStateSchema, message: z.string().nullable() })
    .strict(),
  'config.changed': z.object({ ok: z.boolean(), error: ContractErrorSchema.nullable() }).strict(),
  ...notifyEventChannels,
  ...secretsEventChannels,
  ...telemetryEventChannels,
  ...alertsEventChannels,
  ...sshEventChannels,
  ...proxyEventChannels,
  ...lifecycleEventChannels,
  ...benchEventChannels,
  ...reportEventChannels,
  ...logsEventChannels,
  ...advisorEventChannels,
  ...storageEventChannels,
  ...playgroundEventChannels,
} as const;

export type InvokeChannels = typeof invokeChannels;
export type InvokeChannel = keyof InvokeChannels;
export type EventChannels = typeof eventChannels;
export type EventChannel = keyof EventChannels;

export type ChannelInput<C extends InvokeChannel> = z.input<InvokeChannels[C]['input']>;
export type ChannelParsedInput<C extends InvokeChannel> = z.output<InvokeChannels[C]['input']>;
export type ChannelOutput<C extends InvokeChannel> = z.output<InvokeChannels[C]['output']>;
export type EventPayload<E extends EventChannel> = z.output<EventChannels[E]>;

export function isInvokeChannel(name: string): name is InvokeChannel {
  return Object.prototype.hasOwnProperty.call(invokeChannels, name);
}

export function isEventChannel(name: string): name is EventChannel {
  return Object.prototype.hasOwnProperty.call(eventChannels, name);
}

export { IPC_INVOKE, IPC_EVENT } from './ipc.js';
