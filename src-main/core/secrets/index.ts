// Where secrets live (passphrases the operator chose to remember, upstream API
// keys, client tokens): the OS keychain in the desktop app, a 0600 file
// headless, or memory only. Secrets never leave main.
export { SecretsErrorCode } from './errors.js';
export { MemorySecretStore } from './memory-store.js';
export { FileSecretStore } from './file-store.js';
export {
  EncryptedSecretStore,
  persistenceVerdict,
  type CipherBlobStore,
  type EncryptionBackend,
  type PersistenceVerdict,
} from './encrypted-store.js';
export { secretsChannels } from './channels.js';
