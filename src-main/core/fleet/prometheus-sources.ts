// The sources of hosts that read a Prometheus the operator already runs, and
// one client per Prometheus URL they read (shared by every host reading it).
import { fireAndForget, type Clock, type Logger } from '../base/index.js';
import type { Config, HostConfig } from '../config/index.js';
import { PrometheusApiSource, mergePrometheusConfig, type TelemetrySource } from '../telemetry/index.js';
import { UpstreamClient, upstreamKey } from '../upstream/index.js';

export class PrometheusSources {
  /** One client per Prometheus URL the hosts read (not a model server: no on-prem rule, see client()). */
  private readonly clients = new Map<string, UpstreamClient>();

  constructor(
    private telemetry: Config['telemetry'],
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly maxBytes: number,
  ) {}

  reads(host: HostConfig): boolean {
    return (host.telemetry?.source ?? this.telemetry.source) === 'prometheus';
  }

  /** A new fleet-wide setting: true when it changed (the hosts that read Prometheus restart). */
  update(telemetry: Config['telemetry']): boolean {
    const changed = JSON.stringify(telemetry) !== JSON.stringify(this.telemetry);
    this.telemetry = telemetry;
    return changed;
  }

  /** Sources that do not read over the host's own SSH: Prometheus, when the host (or the fleet) says so. */
  sourcesFor(host: HostConfig): { gpuSource: TelemetrySource | null; serviceSources: Map<string, TelemetrySource> } {
    const serviceSources = new Map<string, TelemetrySource>();
    if (!this.reads(host)) return { gpuSource: null, serviceSources };
    // The schema refuses a host that reads Prometheus without a URL at either level.
    const prometheus = mergePrometheusConfig(this.telemetry.prometheus, host.telemetry?.prometheus);
    if (prometheus === null) return { gpuSource: null, serviceSources };
    const common = { clock: this.clock, client: this.client(prometheus.url), prometheus, host: host.label, maxBytes: this.maxBytes };
    for (const s of host.services) {
      // No Prometheus series are known for an openai service: its health is read through its tunnel.
      if (s.kind === 'openai') continue;
      serviceSources.set(s.id, new PrometheusApiSource({ ...common, id: upstreamKey(host.label, s.id), target: { kind: 'service', service: s } }));
    }
    const gpuSource = host.telemetry?.gpu === 'none' ? null : new PrometheusApiSource({ ...common, id: `${host.label}/gpus`, target: { kind: 'gpus' } });
    return { gpuSource, serviceSources };
  }

  /** A Prometheus URL no host reads any more: its client goes (it finishes what it carries first). */
  closeUnread(config: Config): void {
    const read = new Set(config.hosts.filter((h) => this.reads(h)).map((h) => mergePrometheusConfig(this.telemetry.prometheus, h.telemetry?.prometheus)?.url));
    for (const [url, client] of this.clients) {
      if (read.has(url)) continue;
      this.clients.delete(url);
      fireAndForget(client.close(), this.logger, 'closing the client of a Prometheus no host reads');
    }
  }

  async destroy(): Promise<void> {
    await Promise.allSettled([...this.clients.values()].map((c) => c.destroy()));
    this.clients.clear();
  }

  /**
   * The one client of a Prometheus URL, shared by every host that reads it. Prometheus is no model
   * server and the operator may run it anywhere (README: "Reading a Prometheus you already run"), so
   * the on-prem rule does not apply to it; it still gets the keep-alive rule, deadlines and caps.
   */
  private client(url: string): UpstreamClient {
    let client = this.clients.get(url);
    if (!client) {
      client = UpstreamClient.forUrl(url, { onPrem: null, purpose: 'probe' }, { connections: 8 });
      this.clients.set(url, client);
    }
    return client;
  }
}
