import type { AuditEventType } from '../../src-main/core/store/index.js';

/**
 * An audit type the console itself never writes, for tests of the log as a
 * hash chain (it keeps any dotted name; AuditLog.append's type only admits the
 * console's vocabulary, so such a test says so here).
 */
export function auditType(name: string): AuditEventType {
  return name as AuditEventType;
}
