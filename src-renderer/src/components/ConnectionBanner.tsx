// Always mounted so screen readers announce changes (aria-live), visible only
// while the event stream is down.
import { useShallow } from 'zustand/react/shallow';
import { useAppStore } from '../app/app-context.js';
import { formatUntil } from '../format/format.js';
import { useNow } from './use-now.js';

export function ConnectionBanner(): React.JSX.Element {
  const { status, nextRetryAt, lastError, attempt } = useAppStore(
    useShallow((s) => ({
      status: s.app.connection.status,
      nextRetryAt: s.app.connection.nextRetryAt,
      lastError: s.app.connection.lastError,
      attempt: s.app.connection.attempt,
    })),
  );
  const lost = status === 'lost';
  const now = useNow(lost && nextRetryAt !== null, 500);
  return (
    <div className={`connection-banner${lost ? ' connection-banner--visible' : ''}`} role="status" aria-live="polite" data-testid="connection-banner">
      {lost ? (
        <>
          <strong>Connection to the console lost — retrying</strong>
          <span className="connection-banner__detail">
            {nextRetryAt !== null ? ` next attempt ${formatUntil(nextRetryAt, now)}` : ' reconnecting…'}
            {attempt > 1 ? ` · attempt ${attempt}` : ''}
            {lastError ? ` · ${lastError}` : ''}
          </span>
        </>
      ) : null}
    </div>
  );
}
