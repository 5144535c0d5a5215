// The fleet screen's engine: SSH sessions, service tunnels and poll rounds for
// every configured host, published as one contract FleetSnapshot per interval.
export { FleetErrorCode } from './errors.js';
export {
  FleetService,
  type FleetServiceOptions,
  type ConnectionFactory,
  type ConnectionFactoryDeps,
  type HostStateChange,
  type FleetResourceCounts,
} from './fleet-service.js';
export { probeTunnel, testTunnel, type ProbeResult, type TunnelTestResult, type TunnelTestStep } from './tunnel-probe.js';
export { HostService, type HostServiceDeps, type ConfigSource } from './host-service.js';
export { SshConfigImportService, type SshConfigImportDeps } from './import-service.js';
export { fleetChannels } from './channels.js';
