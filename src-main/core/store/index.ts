// The store: one SQLite file (WAL) holding the console's own records, its
// numbered migrations, small settings and the hash-chained, append-only audit
// log with its verifier. Electron-agnostic; the shell only supplies nativeBinding.
export { openStore, type OpenStoreOptions, type Store } from './database.js';
export { MIGRATIONS, LATEST_SCHEMA_VERSION, GENESIS_HASH, type Migration } from './migrations.js';
export type { SettingsRepository } from './settings.js';
export {
  auditHash,
  verifyAuditChain,
  type AuditLog,
  type RecentAuditVerify,
  type AuditEvent,
  type AuditEventInput,
  type AuditHead,
  type AuditBreak,
  type AuditListQuery,
  type AuditWindowQuery,
  type AuditVerifyResult,
} from './audit.js';
export { AUDIT_EVENT_TYPES, type AuditEventType } from './audit-types.js';
export { canonicalJson } from './canonical-json.js';
export { StoreErrorCode } from './errors.js';
export { auditChannels, verifyAudit, storageChannels, publishStorageHealth, type AuditAlarm } from './channels.js';
export { StorageHealthTracker, type StorageWriter, type StorageWriterCounts, type StorageEpisode } from './storage-health.js';
export { classifyStorageFault, storageErrorCode, wrapSqliteError, type StorageFault } from './errors.js';
export { scheduleAuditChecks } from './audit-schedule.js';
