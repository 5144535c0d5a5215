// The bell in the header: recent notices, do-not-disturb, and (in a browser)
// the permission for desktop notifications. The desktop app shows native
// notifications from main; in web mode this page shows them with the browser's
// Notification API once the operator allowed it. A click leads to the subject.
// The notices, the unseen count and do-not-disturb live in the store's
// notifications slice (fed by `notifications.notice` / `notifications.open`).
import { useCallback, useEffect, useRef, useState } from 'react';
import type { ConsoleNotificationView, EventPayload } from '../../../src-preload/contract/index.js';
import { NOTIFICATIONS_KEPT } from '../store/notifications-slice.js';
import type { RootState } from '../store/types.js';
import { useAppStore, useServices, useStoreChange } from './app-context.js';
import { VIEWS } from './Nav.js';
import { formatTime, isoLocal } from '../format/format.js';
import { Sparkline } from '../features/host/Sparkline.js';

type Permission = 'default' | 'granted' | 'denied' | 'unsupported';

function browserPermission(): Permission {
  return typeof Notification === 'undefined' ? 'unsupported' : (Notification.permission as Permission);
}

const selectLatest = (s: RootState): ConsoleNotificationView | null => s.notifications.latest;
const selectOpenRequest = (s: RootState): EventPayload<'notifications.open'> | null => s.notifications.openRequest;

export function NotificationsMenu(): React.JSX.Element {
  const { transport, store } = useServices();
  const setView = useAppStore((s) => s.setView);
  const selectHost = useAppStore((s) => s.selectHost);
  const items = useAppStore((s) => s.notifications.items);
  const unseen = useAppStore((s) => s.notifications.unseen);
  const dnd = useAppStore((s) => s.notifications.settings);
  const [open, setOpen] = useState(false);
  const [permission, setPermission] = useState<Permission>(browserPermission);
  const [error, setError] = useState<string | null>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const rootRef = useRef<HTMLDivElement>(null);
  const view = useAppStore((s) => s.ui.view);

  // A popover, not a page: Escape (focus back on the bell), a click outside it, or another view closes it.
  useEffect(() => {
    if (!open) return undefined;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      setOpen(false);
      buttonRef.current?.focus();
    };
    const onPointer = (e: PointerEvent) => {
      if (rootRef.current && e.target instanceof Node && !rootRef.current.contains(e.target)) setOpen(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onPointer, true);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onPointer, true);
    };
  }, [open]);
  useEffect(() => setOpen(false), [view]);

  const go = useCallback(
    (route: string) => {
      const [area, label] = route.split('/');
      if (area === 'hosts' && label) {
        selectHost(label);
        setView('host');
      } else if (area && VIEWS.some((v) => v.id === area)) setView(area);
      else setView('fleet');
      setOpen(false);
    },
    [selectHost, setView],
  );

  useEffect(() => {
    let live = true;
    transport
      .invoke('notifications.list', { limit: NOTIFICATIONS_KEPT })
      .then((r) => {
        if (live) store.getState().setNotificationList(r);
      })
      .catch((e: unknown) => live && setError((e as Error).message));
    return () => {
      live = false;
    };
  }, [transport, store]);
  useStoreChange(selectLatest, (n) => {
    if (n === null || transport.kind !== 'web' || n.outcome !== 'sent' || browserPermission() !== 'granted') return;
    const shown = new Notification(n.title, { body: n.body, tag: n.key });
    shown.onclick = () => {
      window.focus();
      go(n.route);
    };
  });
  // The desktop app shows native notifications itself; a click on one arrives here.
  useStoreChange(selectOpenRequest, (request) => {
    if (request !== null) go(request.route);
  });

  const toggleDnd = async () => {
    try {
      store.getState().setNotificationSettings(await transport.invoke('notifications.setDoNotDisturb', dnd.doNotDisturb ? { on: false } : { on: true, minutes: 60 }));
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <div className="notify" ref={rootRef}>
      <button
        ref={buttonRef}
        type="button"
        className="notify__bell"
        aria-haspopup="true"
        aria-expanded={open}
        aria-label={`Notifications${unseen ? `, ${unseen} new` : ''}`}
        data-testid="notifications-button"
        onClick={() => {
          setOpen((o) => !o);
          store.getState().markNotificationsSeen();
        }}
      >
        <BellIcon muted={dnd.doNotDisturb} />
        {unseen > 0 ? <span className="notify__count">{unseen}</span> : null}
      </button>
      {open ? (
        <div className="notify__panel" role="dialog" aria-label="Notifications" data-testid="notifications-panel">
          <div className="notify__controls">
            <button type="button" onClick={() => void toggleDnd()} data-testid="dnd-toggle">
              {dnd.doNotDisturb ? 'Turn do-not-disturb off' : 'Do not disturb for 1 h'}
            </button>
            {transport.kind === 'web' && permission === 'default' ? (
              <button type="button" onClick={() => void Notification.requestPermission().then((p) => setPermission(p as Permission))}>
                Allow desktop notifications
              </button>
            ) : null}
            {transport.kind === 'web' && permission === 'denied' ? <span className="muted">Browser notifications are blocked.</span> : null}
          </div>
          {error ? <p className="inline-error">{error}</p> : null}
          {items.length === 0 ? (
            <p className="muted">Nothing yet.</p>
          ) : (
            <ul className="notify__list">
              {items.map((n) => (
                <li key={n.id} className={`notify__item notify__item--${n.severity}`}>
                  <button type="button" onClick={() => go(n.route)}>
                    <strong>{n.title}</strong>
                    <span>{n.body}</span>
                    <Sparkline series={n.series} />
                    <time dateTime={isoLocal(n.at)}>
                      {formatTime(n.at)}
                      {n.outcome !== 'sent' ? ` · ${n.outcome.replace('-', ' ')}` : ''}
                    </time>
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      ) : null}
    </div>
  );
}

/** Drawn rather than an emoji: emoji fonts are not on every desktop. */
function BellIcon({ muted }: { muted: boolean }): React.JSX.Element {
  return (
    <svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path
        d="M8 1.5a4 4 0 0 0-4 4v2.6L2.6 10.5h10.8L12 8.1V5.5a4 4 0 0 0-4-4Zm-1.6 10.5a1.6 1.6 0 0 0 3.2 0"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.4"
        strokeLinejoin="round"
      />
      {muted ? <path d="M2 2l12 12" stroke="currentColor" strokeWidth="1.4" /> : null}
    </svg>
  );
}
