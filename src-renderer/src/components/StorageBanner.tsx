// The data folder's health: shown while the console cannot write its records
// (a full disk, an I/O error), naming the folder and what is dropped or refused.
// Reads storage.status once (and after a reconnect), then follows storage.health.
import { useEffect, useState } from 'react';
import type { StorageHealth } from '../../../src-preload/contract/index.js';
import { useServices } from '../app/app-context.js';
import { storageBannerText } from './storage-banner-lines.js';
import { useNow } from './use-now.js';

export function StorageBanner(): React.JSX.Element | null {
  const { transport } = useServices();
  const [view, setView] = useState<StorageHealth | null>(null);
  useEffect(() => {
    let live = true;
    const read = (): void => {
      transport
        .invoke('storage.status', {})
        .then((v) => live && setView(v))
        .catch((error: unknown) => console.warn('[storage] status unavailable', error));
    };
    const offEvent = transport.on('storage.health', (v) => setView(v));
    const offConnection = transport.onConnection((c) => c.status === 'open' && read());
    return () => {
      live = false;
      offEvent();
      offConnection();
    };
  }, [transport]);
  const now = useNow(view !== null && view.state !== 'ok', 30_000);
  return view === null ? null : <StorageBannerView view={view} nowMs={now} />;
}

export function StorageBannerView({ view, nowMs }: { view: StorageHealth; nowMs: number }): React.JSX.Element | null {
  const text = storageBannerText(view, nowMs);
  if (text === null) return null;
  return (
    <div className="config-banner storage-banner" role="alert" data-testid="storage-banner">
      <strong>{text.title}</strong>
      <code>{text.folder}</code>
      <span>{text.detail}</span>
      <ul className="storage-banner__lines">
        {text.lines.map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
      <span className="muted">{text.advice}</span>
    </div>
  );
}
