// Product, mode, demo badge and proxy URL; the config error banner sits under it.
import { useShallow } from 'zustand/react/shallow';
import { Badge } from '../components/Badge.js';
import { CopyButton } from '../components/CopyButton.js';
import { ThemeToggle } from '../components/ThemeToggle.js';
import { useAppStore } from './app-context.js';
import { NotificationsMenu } from './NotificationsMenu.js';

export function AppHeader(): React.JSX.Element {
  const { info, infoError, transportKind } = useAppStore(
    useShallow((s) => ({ info: s.app.info, infoError: s.app.infoError, transportKind: s.app.transportKind })),
  );
  return (
    <header className="app-header" data-testid="app-header">
      <div className="app-header__brand">
        <span className="app-header__logo" aria-hidden="true">
          ▣
        </span>
        <span className="app-header__name">{info?.name ?? 'GPU Console'}</span>
        {info?.version ? <span className="app-header__version">v{info.version}</span> : null}
        {info?.demo ? (
          <Badge tone="accent" testId="demo-badge" title="A simulated fleet: nothing here touches real hardware">
            demo fleet
          </Badge>
        ) : null}
      </div>
      <dl className="app-header__facts">
        <div>
          <dt>Mode</dt>
          <dd data-testid="app-mode">{info ? (info.mode === 'electron' ? 'desktop' : 'web (loopback)') : transportKind}</dd>
        </div>
        <div>
          <dt>Proxy</dt>
          <dd className="app-header__proxy">
            {info?.proxyUrl ? (
              <>
                <code data-testid="proxy-url">{info.proxyUrl}</code>
                <CopyButton text={info.proxyUrl} label="Copy proxy URL" />
              </>
            ) : (
              <span className="muted">not running</span>
            )}
          </dd>
        </div>
        {info?.configFile ? (
          <div className="app-header__config">
            <dt>Config</dt>
            <dd>
              <code title={info.configFile}>{info.configFile}</code>
            </dd>
          </div>
        ) : null}
      </dl>
      <div className="app-header__tools">
        {infoError ? (
          <span className="inline-error" role="alert">
            app.info failed: {infoError.message}
          </span>
        ) : null}
        <NotificationsMenu />
        <ThemeToggle />
      </div>
    </header>
  );
}
