// Contract handlers of secrets (channels in src-preload/contract/secrets.ts): values go in, never out.
import type { secretsInvokeChannels } from '../../../src-preload/contract/index.js';
import type { App } from '../app.js';
import { isAppError } from '../base/index.js';
import type { HandlersFor } from './types.js';

export function secretsHandlers(app: App): HandlersFor<keyof typeof secretsInvokeChannels> {
  return {
    'secrets.list': async () => ({ kind: app.secrets.kind, persistent: app.secrets.persistent, names: await app.secrets.list() }),
    'secrets.set': async ({ name, value }, ctx) => {
      let persisted = true;
      let message = `stored (${app.secrets.kind})`;
      try {
        await app.secrets.set(name, value);
      } catch (err) {
        // The keychain store keeps it for this session and says why it could not persist.
        if (!isAppError(err) || err.code !== 'SECRETS_NOT_PERSISTENT') throw err;
        persisted = false;
        message = err.message;
      }
      app.store.audit.append({ type: 'secret.set', actor: app.operatorActor(ctx.caller), target: name, payload: { persisted } });
      return { name, persisted, message };
    },
    'secrets.delete': async ({ name }, ctx) => {
      await app.secrets.delete(name);
      app.store.audit.append({ type: 'secret.deleted', actor: app.operatorActor(ctx.caller), target: name, payload: {} });
      return { name };
    },
  };
}
