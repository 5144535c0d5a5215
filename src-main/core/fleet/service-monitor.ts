import type { ErrorSummary, HostConnectionState, ServiceHealth, TunnelState } from '../../../src-preload/contract/index.js';
import { healthPathOf, type ServiceConfig } from '../config/index.js';
import { toAppError, type AppError, type Clock } from '../base/index.js';
import type { TunnelListener } from '../ssh/index.js';
import { UpstreamClient } from '../upstream/index.js';
import { ServiceDeriver, TelemetryErrorCode, type ServiceFigures, type ServiceReading, type SourceReading } from '../telemetry/index.js';
import { SshErrorCode } from '../ssh/index.js';
import { upstreamKey } from '../upstream/index.js';
import { FleetErrorCode } from './errors.js';
import { probeTunnel, testTunnel, type ProbeResult, type TunnelTestResult } from './tunnel-probe.js';
import { SOURCE_DETAIL, type ScrapeSettings, type ServiceSource } from './sources.js';
import { sleepControlOf, sleepLevelOf, type ServiceState, type StaleCause } from './state.js';

/** While readings through the tunnel succeed, the separate probe (GET /v1/models) runs every this many polls. */
const PROBE_EVERY_POLLS = 10;

/** Builds the service's telemetry source once its tunnel has a client (or at once, for a source that does not need one). */
export type ServiceSourceFactory = (client: UpstreamClient | null) => ServiceSource | null;

/** What the fleet holds for one service's open tunnel: the tunnel, and the client of its private end. */
export interface OpenTunnel {
  forward: TunnelListener;
  client: UpstreamClient;
}

/**
 * One model service on one host: its tunnel, its telemetry source, the last
 * good reading and why it may be stale. The tunnel is `up` only while SSH is
 * connected AND the last end-to-end probe through it (GET /v1/models) passed,
 * so it is never `up` for a dead path; a failing probe on a live link is
 * `degraded`. Readings (from whichever source the host runs) are turned into
 * its ServiceState here; the contract's view of it is built at the edge (snapshot-view.ts).
 */
export class ServiceMonitor {
  private open: OpenTunnel | null = null;
  listenError: ErrorSummary | null = null;
  private hadForward = false;
  private source: ServiceSource | null;
  /** null: nothing read since SSH (re)connected. */
  private lastOk: boolean | null = null;
  private staleCause: StaleCause | null = null;
  private everScraped = false;
  private health: ServiceHealth = 'unknown';
  /** While the server answers that it loads its model: since when (this time). */
  private loadingSince: number | null = null;
  private reading: ServiceReading | null = null;
  private issues: string[] = [];
  private readingAt: number | null = null;
  /** Windowed figures (rates, latency percentiles from histogram deltas, hit rates, KV tokens). */
  private readonly deriver = new ServiceDeriver();
  /** The figures of the last good reading (shown, marked stale, while readings fail). */
  private lastFigures: ServiceFigures | null = null;
  private backfilled = false;
  /** null: no probe since SSH (re)connected. */
  private lastProbe: ProbeResult | null = null;
  private lastTest: TunnelTestResult | null = null;
  private probing: Promise<void> | null = null;
  private pollsSinceProbe = 0;
  /** Bumped when SSH drops, so a probe that started before the drop cannot mark the new link up. */
  private linkEpoch = 0;

  constructor(
    readonly config: ServiceConfig,
    private readonly makeSource: ServiceSourceFactory,
    /** Whether the figures come through the tunnel (SSH down → stale) or from elsewhere (Prometheus). */
    private readonly throughTunnel = true,
  ) {
    this.source = throughTunnel ? null : makeSource(null);
  }

  /** The figures come from elsewhere than the tunnel (Prometheus): they keep coming while SSH is down. */
  /** The model file or folder the server last said it loaded; null when it did not say or was not read. */
  get modelPath(): string | null {
    return this.reading?.modelPath ?? null;
  }

  get readsElsewhere(): boolean {
    return !this.throughTunnel;
  }

  get probe(): ProbeResult | null {
    return this.lastProbe;
  }

  /**
   * Whether this poll should also run the end-to-end probe: always before the
   * first one passed, after a failed one or a failed reading, when the figures
   * do not come through the tunnel, and otherwise every PROBE_EVERY_POLLS polls
   * (a good reading through the tunnel already proves the path).
   */
  probeDue(): boolean {
    this.pollsSinceProbe++;
    const due = this.lastProbe === null || !this.lastProbe.ok || !this.throughTunnel || this.lastOk !== true || this.pollsSinceProbe >= PROBE_EVERY_POLLS;
    if (due) this.pollsSinceProbe = 0;
    return due;
  }

  /** The tunnel, while it is open. */
  get forward(): TunnelListener | null {
    return this.open?.forward ?? null;
  }

  /** The client of the tunnel's private end, while it is open. */
  get client(): UpstreamClient | null {
    return this.open?.client ?? null;
  }

  /** One probe through the tunnel (joins one in flight). */
  runProbe(clock: Clock, settings: ScrapeSettings): Promise<void> {
    const open = this.open;
    if (!open) return Promise.resolve();
    if (this.probing) return this.probing;
    const epoch = this.linkEpoch;
    this.probing = probeTunnel(open.client, clock, { timeoutMs: settings.timeoutMs, path: probePathOf(this.config) })
      .then((result) => {
        if (epoch === this.linkEpoch && this.open === open) this.lastProbe = result;
      })
      .finally(() => {
        this.probing = null;
      });
    return this.probing;
  }

  /**
   * The operator's Test through the tunnel's public port, as their apps reach it (models, then a 1-token
   * chat), over a client of that port made for the Test and closed after it.
   */
  async runTest(clock: Clock, settings: ScrapeSettings, notReady: AppError | null): Promise<TunnelTestResult> {
    const forward = this.forward;
    if (!forward || notReady) {
      const e = notReady ?? { code: FleetErrorCode.TUNNEL_NOT_READY, message: 'the tunnel has no local listener yet' };
      this.lastTest = { ok: false, at: clock.now(), totalMs: 0, localUrl: forward?.url ?? null, steps: [], error: { code: e.code, message: e.message } };
      return this.lastTest;
    }
    let client: UpstreamClient;
    try {
      client = UpstreamClient.forUrl(forward.url, { onPrem: settings.offPrem ?? null, purpose: 'probe' }, { connections: 1 });
    } catch (err) {
      // Refused before anything connected (the on-prem guard): the first step did not run.
      const e = toAppError(err);
      const step = { name: 'models' as const, ok: false, status: null, latencyMs: 0, detail: e.message };
      this.lastTest = { ok: false, at: clock.now(), totalMs: 0, localUrl: forward.url, steps: [step], error: { code: e.code, message: e.message } };
      return this.lastTest;
    }
    try {
      this.lastTest = await testTunnel(client, this.config.model, clock, { timeoutMs: Math.max(settings.timeoutMs, 15_000), localUrl: forward.url, embeddingsOnly: this.config.kind === 'tei' });
    } finally {
      await client.destroy();
    }
    return this.lastTest;
  }

  /** The derived figures of the last good reading; null while stale or before the first one. */
  get figures(): ServiceFigures | null {
    return this.staleCause === null ? this.lastFigures : null;
  }

  /** The last reading succeeded. */
  get fresh(): boolean {
    return this.lastOk === true;
  }

  attachForward(open: OpenTunnel): void {
    this.open = open;
    this.hadForward = true;
    this.listenError = null;
    if (this.throughTunnel) this.source = this.makeSource(open.client);
  }

  /** Takes the tunnel and its client away (the caller closes both); readings through it stop here. */
  detachForward(): OpenTunnel | null {
    const open = this.open;
    this.open = null;
    return open;
  }

  /** SSH left `connected`: figures through the tunnel turn stale, the tunnel must prove itself again afterwards. */
  onHostDown(state: HostConnectionState, error: AppError | null): void {
    this.lastProbe = null;
    this.linkEpoch++;
    if (!this.throughTunnel) return;
    this.lastOk = null;
    this.health = 'unknown';
    this.loadingSince = null;
    // a window spanning the outage would mix two runs of the server
    this.deriver.reset();
    this.source?.reset?.();
    if (this.everScraped) this.staleCause = error ? { code: error.code, message: error.message } : { code: SshErrorCode.NOT_CONNECTED, message: `host is ${state}` };
  }

  /** One reading from the service's source (the first from a source that keeps history seeds the window). Never throws. */
  async scrape(now: () => number): Promise<void> {
    const source = this.source;
    if (!source) return;
    const epoch = this.linkEpoch;
    if (source.backfill && !this.backfilled) {
      this.backfilled = true;
      try {
        for (const past of await source.backfill({ windowMs: this.deriver.windowMs })) if (past.ok) this.apply(past);
      } catch {
        // The instant reading below says what is wrong.
      }
    }
    let r: SourceReading;
    try {
      r = await source.scrape();
    } catch (err) {
      const e = toAppError(err, TelemetryErrorCode.SCRAPE_FAILED);
      r = { ok: false, atMs: now(), stale: { code: e.code, message: e.message, atMs: now() } };
    }
    // A reading through a link that dropped meanwhile says nothing the host-down reason does not.
    if (source !== this.source || (this.throughTunnel && epoch !== this.linkEpoch)) return;
    this.apply(r);
  }

  private apply(r: SourceReading): void {
    if (!r.ok && r.stale.code === TelemetryErrorCode.SERVER_LOADING) {
      this.applyLoading(r.atMs);
      return;
    }
    if (!r.ok) {
      this.lastOk = false;
      this.staleCause = { code: r.stale.code, message: r.stale.message };
      this.health = 'down';
      return;
    }
    const service = r.service;
    if (!service) {
      this.lastOk = false;
      this.staleCause = { code: TelemetryErrorCode.UNPARSEABLE, message: 'the source answered no service figures' };
      return;
    }
    this.lastOk = true;
    this.everScraped = true;
    this.staleCause = null;
    this.loadingSince = null;
    this.health = service.health;
    // The same sample again (Prometheus scrapes less often than the console polls): the figures stand.
    if (this.readingAt !== null && r.atMs <= this.readingAt && this.lastFigures !== null) return;
    this.issues = (r.issues ?? []).slice(0, 10);
    this.reading = service;
    this.readingAt = r.atMs;
    this.lastFigures = this.deriver.push(service, r.atMs);
  }

  /**
   * The server answered that it is loading its model (a restart, a crash brought back): a
   * state of its own, read now, not stale figures. What it served before (rates, running
   * requests, sleep state, even its version: a restart may bring another build) is not
   * shown as current; the window starts afresh once it serves.
   */
  private applyLoading(atMs: number): void {
    this.lastOk = true;
    this.everScraped = true;
    this.staleCause = null;
    this.health = 'loading';
    this.loadingSince ??= atMs;
    this.deriver.reset();
    this.reading = null;
    this.lastFigures = null;
    this.issues = [];
    this.readingAt = atMs;
  }

  private tunnelState(host: HostConnectionState): TunnelState {
    if (!this.forward) {
      switch (host) {
        case 'connecting':
          return 'connecting';
        case 'reconnecting':
          return 'reconnecting';
        case 'failed':
          return 'failed';
        case 'awaiting-trust':
          return 'idle';
        case 'disconnected':
          return this.hadForward ? 'closed' : 'idle';
        case 'connected':
          return this.listenError ? 'failed' : 'connecting';
      }
    }
    switch (host) {
      case 'connected':
        return this.lastProbe === null ? 'connecting' : this.lastProbe.ok ? 'up' : 'degraded';
      case 'connecting':
      case 'reconnecting':
        return 'reconnecting';
      case 'failed':
      case 'awaiting-trust':
        return 'failed';
      case 'disconnected':
        return 'closed';
    }
  }

  /** This service as of now, for the fleet's state (a new object each call). */
  state(label: string, host: HostConnectionState, nextRetryAt: number | null): ServiceState {
    const c = this.config;
    const sleep = this.reading?.sleepState ?? 'unknown';
    const kind = this.source?.kind === 'prometheus-api' ? 'prometheus' : c.kind;
    return {
      key: upstreamKey(label, c.id),
      id: c.id,
      config: c,
      tunnel: {
        state: this.tunnelState(host),
        localUrl: this.forward?.url ?? null,
        listenError: this.listenError,
        probe: this.lastProbe,
        lastTest: this.lastTest,
        nextRetryAt: host === 'reconnecting' ? nextRetryAt : null,
      },
      health: host === 'connected' || !this.throughTunnel ? this.health : 'unknown',
      sleep,
      sleepLevel: sleepLevelOf(sleep),
      sleepControl: sleepControlOf(c.kind, this.reading),
      loadingSince: this.health === 'loading' ? this.loadingSince : null,
      reading: this.reading,
      readingAt: this.readingAt,
      figures: this.lastFigures,
      stale: this.staleCause,
      issues: this.issues,
      source:
        this.health === 'loading'
          ? { kind, atMs: this.readingAt, detail: LOADING_DETAIL }
          : this.source === null
            ? null
            : { kind, atMs: this.readingAt, detail: this.source.detail ?? SOURCE_DETAIL[c.kind] ?? null },
      throughTunnel: this.throughTunnel,
    };
  }
}

/** Where the probe proves the path: /v1/models, or the health path of a server without one (TEI) or of kind openai. */
function probePathOf(c: ServiceConfig): string {
  return c.kind === 'tei' || c.kind === 'openai' ? healthPathOf(c) : '/v1/models';
}

/** What the view says of a loading server: where that came from, and since when. */
const LOADING_DETAIL = 'GET /health: HTTP 503 "Loading model"';
