// The desktop app's SecretStore: Electron's safeStorage (Keychain, DPAPI,
// libsecret/kwallet) with encrypted blobs in the settings table. The policy —
// refuse to persist under basic_text — lives in core/secrets and is tested there.
import { safeStorage } from 'electron';
import { EncryptedSecretStore, type EncryptionBackend } from '../core/secrets/index.js';
import type { Store } from '../core/store/index.js';

const PREFIX = 'secret.';

export function keychainSecretStore(store: Store): EncryptedSecretStore {
  const backend: EncryptionBackend = {
    isEncryptionAvailable: () => safeStorage.isEncryptionAvailable(),
    selectedBackend: () => (process.platform === 'linux' ? safeStorage.getSelectedStorageBackend() : undefined),
    encryptString: (plain) => safeStorage.encryptString(plain),
    decryptString: (cipher) => safeStorage.decryptString(cipher),
  };
  return new EncryptedSecretStore(backend, {
    keys: () => Object.keys(store.settings.all()).filter((k) => k.startsWith(PREFIX)).map((k) => k.slice(PREFIX.length)),
    get: (key) => store.settings.get<string>(PREFIX + key),
    set: (key, value) => store.settings.set(PREFIX + key, value),
    delete: (key) => void store.settings.delete(PREFIX + key),
  });
}
