// What a report takes from the fleet's state rather than asking the hosts again:
// each host's session (state, host key, transport) and its last readings (the
// GPUs of the last GPU read; a service's health, version and served model from
// its last reading). A service reading that is not current (stale) gives no
// version or models: they are absent, not carried over from an older run. The checks
// that must run fresh at export (live-checks.ts) go through the same fleet:
// its SSH exec and each service's UpstreamClient.
import type { InventoryHost, InventoryService } from '../../../src-preload/contract/index.js';
import type { HostConfig } from '../config/index.js';
import type { HostState, ServiceState } from '../fleet/index.js';
import { configuredService } from './live-checks.js';

/** The session facts the live checks record beside what they measure. */
export interface SessionFacts {
  hostKeyFingerprint: string | null;
  connection: string;
  sshTransport: string | null;
}

export function sessionFacts(host: HostState | undefined): SessionFacts {
  return {
    hostKeyFingerprint: host?.session.hostKeyFingerprint ?? null,
    connection: host?.session.state ?? 'disconnected',
    sshTransport: transportText(host?.session.transport ?? undefined),
  };
}

/** A host's inventory without contacting it (request.live = false): config plus the fleet's last readings. */
export function inventoryFromState(config: HostConfig, host: HostState | undefined): InventoryHost {
  const { ssh } = config;
  // Names and sizes of the GPUs last read: they stand while a later read fails.
  const gpus = host?.gpus.readings ?? [];
  return {
    label: config.label,
    address: `${ssh.user}@${ssh.host}:${ssh.port}`,
    jumpHost: ssh.jumpHost ?? null,
    ...sessionFacts(host),
    liveError: null,
    pricePerHourUsd: config.pricePerHourUsd ?? null,
    gpus: gpus.map((g) => ({ index: g.index, name: g.name, memoryTotalMiB: g.memoryTotalMiB, driverVersion: null })),
    services: config.services.map((s) => serviceInventory(s, host?.services.find((x) => x.id === s.id))),
  };
}

function serviceInventory(config: HostConfig['services'][number], state: ServiceState | undefined): InventoryService {
  // A server loading its model does not answer /health 200: `down` by this report's own check.
  const health = state === undefined ? 'unknown' : state.health === 'loading' ? 'down' : state.health;
  const row = configuredService(config, health);
  const reading = state && state.stale === null ? state.reading : null;
  if (reading === null) return row;
  return {
    ...row,
    serverVersion: reading.version,
    servedModels: reading.modelName === null ? [] : [{ id: reading.modelName, maxContext: reading.maxModelLen === null ? null : Math.trunc(reading.maxModelLen) }],
  };
}

/** `openssh (OpenSSH_9.2p1 …; configured: openssh)`: what carried the evidence's SSH, and why. */
function transportText(t: { kind: string; why: string; client: string | null } | undefined): string | null {
  if (!t) return null;
  const client = t.kind === 'openssh' && t.client ? `${t.client.split(',')[0]}; ` : '';
  return `${t.kind} (${client}${t.why})`;
}
