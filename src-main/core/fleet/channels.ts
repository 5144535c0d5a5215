// Contract channels of the fleet: the snapshot, host sessions, trust decisions,
// passphrases, tunnel tests, config reload and the ~/.ssh/config import.
import type { sshInvokeChannels } from '../../../src-preload/contract/index.js';
import { toAppError } from '../base/index.js';
import type { HandlersFor } from '../channel.js';
import type { FleetService } from './fleet-service.js';
import type { HostService } from './host-service.js';
import type { SshConfigImportService } from './import-service.js';
import { fleetSnapshotOf } from './snapshot-view.js';

type FleetChannel = keyof typeof sshInvokeChannels | 'fleet.snapshot' | 'hosts.connect' | 'hosts.disconnect' | 'config.reload';

export function fleetChannels(fleet: FleetService, hosts: HostService, imports: SshConfigImportService): HandlersFor<FleetChannel> {
  return {
    // The edge: the contract's view of the fleet's state, built by snapshot-view.ts.
    'fleet.snapshot': () => fleetSnapshotOf(fleet.state()),
    'hosts.connect': async ({ label }, ctx) => ({ label, state: await hosts.connect(label, ctx.caller) }),
    'hosts.disconnect': async ({ label }, ctx) => ({ label, state: await hosts.disconnect(label, ctx.caller) }),
    'hosts.reconnect': async ({ label }, ctx) => ({ label, state: await hosts.reconnect(label, ctx.caller) }),
    'hosts.trust': async ({ label, fingerprint }, ctx) => ({ label, state: await hosts.trust(label, fingerprint, ctx.caller) }),
    'hosts.refuseTrust': async ({ label, fingerprint }, ctx) => ({ label, state: await hosts.refuse(label, fingerprint, ctx.caller) }),
    'hosts.forgetTrust': async ({ label, fingerprint, typedLabel }, ctx) => ({ label, state: await hosts.forgetTrust(label, fingerprint, typedLabel, ctx.caller) }),
    'hosts.passphrase': async ({ label, passphrase }, ctx) => ({ label, state: await hosts.passphrase(label, passphrase, ctx.caller) }),
    'hosts.declinePrompt': async ({ label }, ctx) => ({ label, state: await hosts.declinePrompt(label, ctx.caller) }),
    'tunnels.test': ({ label, serviceId }, ctx) => hosts.testTunnel(label, serviceId, ctx.caller),
    'config.reload': async () => {
      const error = await hosts.reloadConfig();
      return { ok: error === null, error: error ? { code: error.code, message: error.message, retryable: error.retryable, details: toAppError(error).details } : null };
    },
    'hosts.importPreview': ({ source }, ctx) => imports.preview(source, ctx.caller, ctx.signal),
    'hosts.importApply': ({ previewId, labels, acknowledgedCommands }, ctx) => imports.apply(previewId, labels, acknowledgedCommands ?? [], ctx.caller),
  };
}
