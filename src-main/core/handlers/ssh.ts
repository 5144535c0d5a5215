// Contract handlers of the ssh capability (channels in src-preload/contract/ssh.ts).
import type { sshInvokeChannels } from '../../../src-preload/contract/index.js';
import type { App } from '../app.js';
import type { HandlersFor } from './types.js';

export function sshHandlers(app: App): HandlersFor<keyof typeof sshInvokeChannels> {
  return {
    'hosts.reconnect': async ({ label }, ctx) => ({ label, state: await app.ssh.reconnect(label, ctx.caller) }),
    'hosts.trust': async ({ label, fingerprint }, ctx) => ({ label, state: await app.ssh.trust(label, fingerprint, ctx.caller) }),
    'hosts.forgetTrust': async ({ label, fingerprint, typedLabel }, ctx) => ({ label, state: await app.ssh.forgetTrust(label, fingerprint, typedLabel, ctx.caller) }),
    'hosts.refuseTrust': async ({ label, fingerprint }, ctx) => ({ label, state: await app.ssh.refuse(label, fingerprint, ctx.caller) }),
    'hosts.passphrase': async ({ label, passphrase }, ctx) => ({ label, state: await app.ssh.passphrase(label, passphrase, ctx.caller) }),
    'tunnels.test': ({ label, serviceId }, ctx) => app.ssh.testTunnel(label, serviceId, ctx.caller),
    'hosts.importPreview': ({ source }, ctx) => app.ssh.importPreview(source, ctx.caller, ctx.signal),
    'hosts.importApply': ({ previewId, labels }, ctx) =>
      app.ssh.importApply(previewId, labels, ctx.caller, { demo: app.demo !== null, reload: () => app.reloadConfig() }),
  };
}
