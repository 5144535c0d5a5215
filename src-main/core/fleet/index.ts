// The fleet: SSH sessions, service tunnels and poll rounds for every configured
// host, published inside the console as a typed FleetState (state.ts) and to the
// UI as the contract's FleetSnapshot, built at one edge (snapshot-view.ts).
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
export {
  causeText,
  serviceStateOf,
  sleepLevelOf,
  sleepControlOf,
  type FleetState,
  type HostState,
  type HostGpuState,
  type HostSessionState,
  type ServiceState,
  type StaleCause,
  type TunnelStatus,
  type ReadingSource,
} from './state.js';
export { fleetSnapshotOf, hostViewOf, serviceViewOf, figuresView } from './snapshot-view.js';
export { type HostGpuProcessesState } from './state.js';
export { type HostHealthState, type HostHealthFigures, type HostReboot, type HealthSettings } from './host-health.js';
export { type MatchedGpuProcess, type ProcessFlag } from './gpu-process-match.js';
