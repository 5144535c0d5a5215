// The audit chain is checked on its own too, not only when someone asks
// (`audit verify`): shortly after start, then every 6 hours; a break pages the
// on-call through the alarm (verifyAudit).
import { DisposableStore, type Clock, type Disposable, type Logger } from '../base/index.js';
import { verifyAudit, type AuditAlarm } from './channels.js';
import type { Store } from './database.js';

const AUDIT_FIRST_CHECK_MS = 30_000;
const AUDIT_CHECK_INTERVAL_MS = 6 * 3_600_000;

export function scheduleAuditChecks(store: Store, alarm: AuditAlarm, clock: Clock, logger: Logger): Disposable {
  const check = () => {
    try {
      verifyAudit(store, alarm);
    } catch (err) {
      logger.warn('audit verification could not run', { message: (err as Error).message });
    }
  };
  const timers = new DisposableStore();
  timers.add(clock.setTimeout(check, AUDIT_FIRST_CHECK_MS));
  timers.add(clock.setInterval(check, AUDIT_CHECK_INTERVAL_MS));
  return timers;
}
