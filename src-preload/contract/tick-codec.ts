import { z } from 'zod';
import { eventChannels } from './channels.js';
import { FleetSnapshotSchema, GpuProcessViewSchema, GpuViewSchema, HostViewSchema, ServiceViewSchema, type FleetSnapshot } from './fleet.js';
import { HostTickSchema, TelemetryTickSchema, type TelemetryTick } from './telemetry.js';
import { ClassFiguresSchema, ProxyStatsSchema, TrafficClassSchema, UpstreamFiguresSchema, UpstreamKeySchema, type ProxyStats } from './proxy.js';
import { applyObject, DeltaApplyError, diffObject, listPatchSchema, sparseObjectSchema, unsetSchema, type ObjectSpec } from './delta.js';
import { CompactShapeError, compactPatch, compactWireParts, expandPatch } from './tick-compact.js';

// Delta ticks: `fleet.tick`, `telemetry.tick` and `proxy.stats` leave a bridge as what changed
// since the last tick that bridge wrote to that subscriber, not the whole fleet.
// Main keeps one TickStreamEncoder per subscriber (an SSE connection, a
// window); the renderer's transport keeps one TickStreamDecoder per stream and
// hands listeners the same full FleetSnapshot / TelemetryTick as before.
//
// A stream starts with a keyframe (the whole state). A delta names the state it
// applies to (`base`, the `seq` of the event before it on that stream); a
// decoder that does not hold exactly that state refuses it, holds nothing, and
// asks the bridge for a keyframe (IPC_RESYNC / POST /api/events/resync). A
// bridge that skips an event (a backed-up socket) encodes nothing for it, so the
// next delta is against what that subscriber really received.

const SeqSchema = z.number().int().nonnegative();

// ── wire schemas, built from the real ones: changed fields are validated as strictly as full ones ──

const PidSchema = z.number().int().nullable();

/** A GPU's processes are keyed by pid: a process whose memory moved is one figure, not the list again. */
export const GpuProcessPatchSchema = z
  .object({ key: PidSchema, set: sparseObjectSchema(GpuProcessViewSchema.omit({ pid: true })).optional(), ...compactWireParts })
  .strict();

export const GpuPatchSchema = z
  .object({
    key: z.number().int(),
    set: sparseObjectSchema(GpuViewSchema.omit({ index: true })).optional(),
    unset: unsetSchema(GpuViewSchema).optional(),
    processes: listPatchSchema(PidSchema, GpuProcessViewSchema, GpuProcessPatchSchema).optional(),
    ...compactWireParts,
  })
  .strict();

export const ServicePatchSchema = z
  .object({
    key: z.string(),
    set: sparseObjectSchema(ServiceViewSchema.omit({ id: true })).optional(),
    unset: unsetSchema(ServiceViewSchema).optional(),
    ...compactWireParts,
  })
  .strict();

export const HostPatchSchema = z
  .object({
    key: z.string(),
    set: sparseObjectSchema(HostViewSchema.omit({ label: true, gpus: true, services: true })).optional(),
    unset: unsetSchema(HostViewSchema).optional(),
    ...compactWireParts,
    gpus: listPatchSchema(z.number().int(), GpuViewSchema, GpuPatchSchema).optional(),
    services: listPatchSchema(z.string(), ServiceViewSchema, ServicePatchSchema).optional(),
  })
  .strict();

export const FleetTickWireSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('key'), seq: SeqSchema, state: FleetSnapshotSchema }).strict(),
  z
    .object({
      kind: z.literal('delta'),
      seq: SeqSchema,
      base: SeqSchema,
      set: FleetSnapshotSchema.omit({ hosts: true }).partial().optional(),
      ...compactWireParts,
      hosts: listPatchSchema(z.string(), HostViewSchema, HostPatchSchema).optional(),
    })
    .strict(),
]);
export type FleetTickWire = z.infer<typeof FleetTickWireSchema>;

export const HostTickPatchSchema = z
  .object({
    key: z.string(),
    set: HostTickSchema.pick({ staleReason: true }).partial().optional(),
    ...compactWireParts,
    values: z
      .object({ set: HostTickSchema.shape.values.optional(), unset: z.array(z.string()).min(1).optional(), ...compactWireParts })
      .strict()
      .optional(),
  })
  .strict();

export const TelemetryTickWireSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('key'), seq: SeqSchema, state: TelemetryTickSchema }).strict(),
  z
    .object({
      kind: z.literal('delta'),
      seq: SeqSchema,
      base: SeqSchema,
      set: TelemetryTickSchema.omit({ hosts: true }).partial().optional(),
      ...compactWireParts,
      hosts: listPatchSchema(z.string(), HostTickSchema, HostTickPatchSchema).optional(),
    })
    .strict(),
]);
export type TelemetryTickWire = z.infer<typeof TelemetryTickWireSchema>;

// proxy.stats: upstreams keyed by `upstream`, their classes by `class`; everything else (the models
// and groups, latency, errors, the stalled list) is replaced whole when it differs.
export const ClassFiguresPatchSchema = z
  .object({
    key: TrafficClassSchema,
    set: sparseObjectSchema(ClassFiguresSchema.omit({ class: true })).optional(),
    unset: unsetSchema(ClassFiguresSchema).optional(),
    ...compactWireParts,
  })
  .strict();

export const UpstreamFiguresPatchSchema = z
  .object({
    key: UpstreamKeySchema,
    set: sparseObjectSchema(UpstreamFiguresSchema.omit({ upstream: true, classes: true })).optional(),
    unset: unsetSchema(UpstreamFiguresSchema).optional(),
    ...compactWireParts,
    classes: listPatchSchema(TrafficClassSchema, ClassFiguresSchema, ClassFiguresPatchSchema).optional(),
  })
  .strict();

export const ProxyStatsWireSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('key'), seq: SeqSchema, state: ProxyStatsSchema }).strict(),
  z
    .object({
      kind: z.literal('delta'),
      seq: SeqSchema,
      base: SeqSchema,
      set: sparseObjectSchema(ProxyStatsSchema.omit({ upstreams: true })).optional(),
      unset: unsetSchema(ProxyStatsSchema).optional(),
      ...compactWireParts,
      upstreams: listPatchSchema(UpstreamKeySchema, UpstreamFiguresSchema, UpstreamFiguresPatchSchema).optional(),
    })
    .strict(),
]);
export type ProxyStatsWire = z.infer<typeof ProxyStatsWireSchema>;

/** How the patches above are laid over the state (must match the schemas; the codec tests round-trip both). */
const FLEET_SPEC: ObjectSpec = {
  lists: {
    hosts: {
      keyField: 'label',
      item: { lists: { gpus: { keyField: 'index', item: { lists: { processes: { keyField: 'pid', item: {} } } } }, services: { keyField: 'id', item: {} } } },
    },
  },
};
const TELEMETRY_SPEC: ObjectSpec = { lists: { hosts: { keyField: 'host', item: { records: ['values'] } } } };
const PROXY_STATS_SPEC: ObjectSpec = {
  lists: { upstreams: { keyField: 'upstream', item: { lists: { classes: { keyField: 'class', item: {} } } } } },
};

interface TickStates {
  'fleet.tick': FleetSnapshot;
  'telemetry.tick': TelemetryTick;
  'proxy.stats': ProxyStats;
}
interface TickWires {
  'fleet.tick': FleetTickWire;
  'telemetry.tick': TelemetryTickWire;
  'proxy.stats': ProxyStatsWire;
}
/** The event channels that travel delta-coded. */
export type DeltaChannel = keyof TickStates;
export type TickState<C extends DeltaChannel> = TickStates[C];
export type TickWire<C extends DeltaChannel> = TickWires[C];

const CODECS: { readonly [C in DeltaChannel]: { readonly schema: z.ZodType<TickWires[C]>; readonly spec: ObjectSpec } } = {
  'fleet.tick': { schema: FleetTickWireSchema, spec: FLEET_SPEC },
  'telemetry.tick': { schema: TelemetryTickWireSchema, spec: TELEMETRY_SPEC },
  'proxy.stats': { schema: ProxyStatsWireSchema, spec: PROXY_STATS_SPEC },
};

export const DELTA_CHANNELS: readonly DeltaChannel[] = ['fleet.tick', 'telemetry.tick', 'proxy.stats'];

export function isDeltaChannel(name: unknown): name is DeltaChannel {
  return name === 'fleet.tick' || name === 'telemetry.tick' || name === 'proxy.stats';
}

/**
 * What a bridge carries per event channel: the event's own schema, or the wire
 * form of a delta-coded one. Listeners still get `eventChannels` types.
 */
export const eventWireChannels = {
  ...eventChannels,
  'fleet.tick': FleetTickWireSchema,
  'telemetry.tick': TelemetryTickWireSchema,
  'proxy.stats': ProxyStatsWireSchema,
} as const;

/** The web bridge names each SSE connection in this response header, for its resync requests. */
export const EVENT_STREAM_HEADER = 'x-gpu-console-stream';
/** POST here (JSON ResyncRequest) to have one SSE connection's next event of a channel be a keyframe. */
export const EVENTS_RESYNC_PATH = '/api/events/resync';

/** The renderer asks one stream for a keyframe (web: POST EVENTS_RESYNC_PATH; IPC: IPC_RESYNC). */
export const ResyncRequestSchema = z
  .object({ stream: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/), channel: z.enum(['fleet.tick', 'telemetry.tick', 'proxy.stats']) })
  .strict();
export type ResyncRequest = z.infer<typeof ResyncRequestSchema>;

type Obj = Record<string, unknown>;

/**
 * Main's side, one per subscriber. `encode` must be called only for events
 * that are then written to that subscriber, in order; states handed to it must
 * not be mutated afterwards (the api's parse gives each event fresh objects).
 */
export class TickStreamEncoder {
  private readonly sent = new Map<DeltaChannel, { seq: number; state: Obj }>();
  private nextSeq = 0;

  encode<C extends DeltaChannel>(channel: C, state: TickState<C>): TickWire<C> {
    const seq = this.nextSeq++;
    const last = this.sent.get(channel);
    this.sent.set(channel, { seq, state: state as unknown as Obj });
    if (last === undefined) return { kind: 'key', seq, state } as TickWire<C>;
    const spec = CODECS[channel].spec;
    const patch = diffObject(last.state, state as unknown as Obj, spec);
    return { kind: 'delta', seq, base: last.seq, ...(patch === undefined ? {} : compactPatch(patch, last.state, spec)) } as TickWire<C>;
  }

  /** Any event channel: delta-coded ones encoded, others unchanged. */
  encodeEvent(channel: string, payload: unknown): unknown {
    return isDeltaChannel(channel) ? this.encode(channel, payload as TickState<typeof channel>) : payload;
  }

  /** The next event of `channel` (of every coded channel when omitted) is a keyframe. */
  resync(channel?: DeltaChannel): void {
    if (channel === undefined) this.sent.clear();
    else this.sent.delete(channel);
  }
}

/** Why a decoder refused an event: `no-state` is the normal wait for the first keyframe. */
export type TickRefusal = 'invalid' | 'unfit' | 'out-of-step' | 'no-state';

export type TickDecodeResult<S> =
  | { ok: true; state: S }
  | {
      ok: false;
      refusal: TickRefusal;
      message: string;
      /** Ask the bridge for a keyframe now (once per refusal streak, again every few refused events). */
      resync: boolean;
    };

/** While waiting for a keyframe, the request is repeated every this many refused events (one may be lost). */
export const RESYNC_REPEAT_EVERY = 5;

/**
 * The renderer's side, one per stream. Nothing is applied from an event it
 * refuses; it then holds no state for that channel until a keyframe comes.
 * Unchanged hosts, GPUs and services of a delta are the objects of the state before.
 */
export class TickStreamDecoder {
  private readonly held = new Map<DeltaChannel, { seq: number; state: Obj }>();
  private readonly refused = new Map<DeltaChannel, number>();

  decode<C extends DeltaChannel>(channel: C, raw: unknown): TickDecodeResult<TickState<C>> {
    const codec = CODECS[channel];
    // A delta is judged against the state held first: its compact parts can only be read against that state.
    const delta = deltaHeader(raw);
    const held = this.held.get(channel);
    if (delta !== null && held === undefined) return this.refuse(channel, 'no-state', `${channel}: a delta on #${delta.base} before any keyframe`);
    if (delta !== null && held!.seq !== delta.base) return this.refuse(channel, 'out-of-step', `${channel}: a delta on #${delta.base}, but the state held is #${held!.seq}`);
    let named: unknown = raw;
    try {
      if (delta !== null) named = { kind: 'delta', seq: delta.seq, base: delta.base, ...(expandPatch(delta.patch, held!.state, codec.spec, '') as Obj) };
    } catch (error) {
      if (error instanceof CompactShapeError) return this.refuse(channel, 'invalid', `${channel}: ${error.message}`);
      if (error instanceof DeltaApplyError) return this.refuse(channel, 'unfit', `${channel}: ${error.message}`);
      throw error;
    }
    const parsed = codec.schema.safeParse(named);
    if (!parsed.success) return this.refuse(channel, 'invalid', `${channel}: ${describeWireIssues(named, parsed.error)}`);
    const wire = parsed.data as { kind: 'key'; seq: number; state: Obj } | ({ kind: 'delta'; seq: number; base: number } & Obj);
    if (wire.kind === 'key') return this.accept(channel, wire.seq, wire.state);
    const { kind: _kind, seq, base: _base, ...patch } = wire;
    let next: Obj;
    try {
      next = applyObject(held!.state, patch, codec.spec, '');
    } catch (error) {
      if (!(error instanceof DeltaApplyError)) throw error;
      return this.refuse(channel, 'unfit', `${channel}: ${error.message}`);
    }
    return this.accept(channel, seq, next);
  }

  /** An event of `channel` arrived that could not even be read (not JSON): refused like an invalid one. */
  unreadable<C extends DeltaChannel>(channel: C, message: string): TickDecodeResult<TickState<C>> {
    return this.refuse(channel, 'invalid', message);
  }

  /** Forget the state of `channel` (of all when omitted): the stream was replaced or nobody listens. */
  reset(channel?: DeltaChannel): void {
    if (channel === undefined) {
      this.held.clear();
      this.refused.clear();
    } else {
      this.held.delete(channel);
      this.refused.delete(channel);
    }
  }

  private accept<C extends DeltaChannel>(channel: C, seq: number, state: Obj): TickDecodeResult<TickState<C>> {
    this.held.set(channel, { seq, state });
    this.refused.delete(channel);
    return { ok: true, state: state as unknown as TickState<C> };
  }

  private refuse<S>(channel: DeltaChannel, refusal: TickRefusal, message: string): TickDecodeResult<S> {
    this.held.delete(channel);
    const count = (this.refused.get(channel) ?? 0) + 1;
    this.refused.set(channel, count);
    return { ok: false, refusal, message, resync: count === 1 || count % RESYNC_REPEAT_EVERY === 0 };
  }
}

/** A delta's seq, base and patch, when `raw` is one with readable numbers (else null: the schema judges it). */
function deltaHeader(raw: unknown): { kind: 'delta'; seq: number; base: number; patch: Obj } | null {
  if (typeof raw !== 'object' || raw === null || (raw as Obj).kind !== 'delta') return null;
  const { kind: _kind, seq, base, ...patch } = raw as Obj;
  if (!SeqSchema.safeParse(seq).success || !SeqSchema.safeParse(base).success) return null;
  return { kind: 'delta', seq: seq as number, base: base as number, patch };
}

/**
 * zod issues with list positions turned into the item's key, so a message names
 * the host and field: `hosts.patch[gpu-03].gpus.patch[0].set.powerW: Invalid input…`.
 */
export function describeWireIssues(raw: unknown, error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${wirePath(raw, issue.path) || '(root)'}: ${issue.message}`)
    .join('; ');
}

function wirePath(raw: unknown, path: readonly PropertyKey[]): string {
  let node: unknown = raw;
  let out = '';
  for (const segment of path) {
    const here = typeof node === 'object' && node !== null ? (node as Record<PropertyKey, unknown>)[segment] : undefined;
    if (typeof segment === 'number') {
      const key = itemKey(here);
      out += key === undefined ? `[#${segment}]` : `[${key}]`;
    } else {
      out += `${out === '' ? '' : '.'}${String(segment)}`;
    }
    node = here;
  }
  return out;
}

function itemKey(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const o = item as Obj;
  for (const field of ['key', 'label', 'host', 'id', 'index']) {
    const value = o[field];
    if (typeof value === 'string' || typeof value === 'number') return String(value).slice(0, 64);
  }
  return undefined;
}
