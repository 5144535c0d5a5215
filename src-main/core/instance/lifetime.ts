// A console's own start and stop, as the audit log records them (availability
// in evidence reports counts from these rows). A one-command core of the CLI is
// no console start and records neither: its command's rows say what it did.
import type { AuditLog } from '../store/index.js';

export interface ConsoleStart {
  version: string;
  mode: 'electron' | 'web';
  demo: boolean;
  configFile: string | null;
}

export function recordConsoleStarted(audit: AuditLog, start: ConsoleStart): void {
  audit.append({ type: 'console.started', actor: 'system', target: null, payload: { ...start, pid: process.pid } });
}

export function recordConsoleStopped(audit: AuditLog): void {
  audit.append({ type: 'console.stopped', actor: 'system', target: null, payload: { pid: process.pid } });
}
