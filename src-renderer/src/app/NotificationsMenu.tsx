// The bell in the header: recent notices, do-not-disturb, and (in a browser)
// the permission for desktop notifications. The desktop app shows native
// notifications from main; in web mode this page shows them with the browser's
// Notification API once the operator allowed it. A click leads to the subject.
import { useCallback, useEffect, useRef, useState } from 'react';
import type { ConsoleNotificationView } from '../../../src-preload/contract/index.js';
import { useAppStore, useServices } from './app-context.js';
import { VIEWS } from './Nav.js';

type Permission = 'default' | 'granted' | 'denied' | 'unsupported';

function browserPermission(): Permission {
  return typeof Notification === 'undefined' ? 'unsupported' : (Notification.permission as Permission);
}

export function NotificationsMenu(): React.JSX.Element {
  const { transport } = useServices();
  const setView = useAppStore((s) => s.setView);
  const selectHost = useAppStore((s) => s.selectHost);
  const [items, setItems] = useState<ConsoleNotificationView[]>([]);
  const [unseen, setUnseen] = useState(0);
  const [open, setOpen] = useState(false);
  const [dnd, setDnd] = useState<{ doNotDisturb: boolean; until: number | null }>({ doNotDisturb: false, until: null });
  const [permission, setPermission] = useState<Permission>(browserPermission);
  const [error, setError] = useState<string | null>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);

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
      .invoke('notifications.list', { limit: 50 })
      .then((r) => {
        if (!live) return;
        setItems(r.notifications);
        setDnd(r.settings);
      })
      .catch((e: unknown) => live && setError((e as Error).message));
    const off = transport.on('notifications.notice', (n) => {
      setItems((prev) => [n, ...prev].slice(0, 50));
      setUnseen((u) => u + 1);
      if (transport.kind === 'web' && n.outcome === 'sent' && browserPermission() === 'granted') {
        const shown = new Notification(n.title, { body: n.body, tag: n.key });
        shown.onclick = () => {
          window.focus();
          go(n.route);
        };
      }
    });
    // The desktop app shows native notifications itself; a click on one arrives here.
    const offOpen = transport.on('notifications.open', ({ route }) => go(route));
    return () => {
      live = false;
      off();
      offOpen();
    };
  }, [transport, go]);

  const toggleDnd = async () => {
    try {
      setDnd(await transport.invoke('notifications.setDoNotDisturb', dnd.doNotDisturb ? { on: false } : { on: true, minutes: 60 }));
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <div className="notify">
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
          setUnseen(0);
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
                    <time dateTime={new Date(n.at).toISOString()}>
                      {new Date(n.at).toLocaleTimeString()}
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
