// Contract channels of secrets (src-preload/contract/secrets.ts): values go in,
// never out; every change is audited by name, never by value. Names a
// capability keeps for itself (keys.ts) are neither written nor deleted here.
import type { secretsInvokeChannels } from '../../../src-preload/contract/index.js';
import { isAppError, operatorActor } from '../base/index.js';
import type { HandlersFor } from '../channel.js';
import type { SecretStore } from '../ports.js';
import type { AuditLog } from '../store/index.js';
import { SecretsErrorCode } from './errors.js';
import { checkWritableKey } from './keys.js';

export function secretsChannels(secrets: SecretStore, audit: AuditLog): HandlersFor<keyof typeof secretsInvokeChannels> {
  return {
    'secrets.list': async () => ({ kind: secrets.kind, persistent: secrets.persistent, names: await secrets.list() }),
    'secrets.set': async ({ name, value }, ctx) => {
      checkWritableKey(name);
      let persisted = true;
      let message = `stored (${secrets.kind})`;
      try {
        await secrets.set(name, value);
      } catch (err) {
        // The keychain store keeps it for this session and says why it could not persist.
        if (!isAppError(err) || err.code !== SecretsErrorCode.NOT_PERSISTENT) throw err;
        persisted = false;
        message = err.message;
      }
      audit.append({ type: 'secret.set', actor: operatorActor(ctx.caller), target: name, payload: { persisted } });
      return { name, persisted, message };
    },
    'secrets.delete': async ({ name }, ctx) => {
      checkWritableKey(name);
      await secrets.delete(name);
      audit.append({ type: 'secret.deleted', actor: operatorActor(ctx.caller), target: name, payload: {} });
      return { name };
    },
  };
}
