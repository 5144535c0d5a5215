import { useShallow } from 'zustand/react/shallow';
import { useAppStore } from '../../app/app-context.js';
import { CopyButton } from '../../components/CopyButton.js';

/** The base URL for OPENAI_BASE_URL, with copy, and the live totals. */
export function EndpointPanel(): React.JSX.Element {
  const { url, answered, inFlight, queued } = useAppStore(
    useShallow((s) => ({
      url: s.proxy.stats?.url ?? s.app.info?.proxyUrl ?? null,
      answered: s.proxy.stats?.answered ?? null,
      inFlight: s.proxy.stats?.inFlight ?? null,
      queued: s.proxy.stats?.queued ?? null,
    })),
  );
  return (
    <dl className="fleet-summary proxy-endpoint">
      <div>
        <dt>Endpoint</dt>
        <dd className="app-header__proxy">
          {url ? (
            <>
              <code data-testid="proxy-endpoint" data-value={url}>
                {url}
              </code>
              <CopyButton text={url} label="Copy endpoint URL" />
            </>
          ) : (
            <span className="muted">not running</span>
          )}
        </dd>
      </div>
      <div>
        <dt>In flight</dt>
        <dd className="num" data-testid="proxy-inflight">
          {inFlight ?? '—'}
        </dd>
      </div>
      <div>
        <dt>Queued</dt>
        <dd className={`num${queued ? ' text-warn' : ''}`} data-testid="proxy-queued">
          {queued ?? '—'}
        </dd>
      </div>
      <div>
        <dt>Answered</dt>
        <dd className="num" data-testid="proxy-answered" data-value={answered ?? ''}>
          {answered ?? '—'}
        </dd>
      </div>
    </dl>
  );
}
