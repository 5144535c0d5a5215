// The Proxy view: where clients point, who may call, which replicas serve each
// model and where requests went, how each upstream's pools and queues are
// doing, and the recent requests.
import { useAppStore } from '../../app/app-context.js';
import { AdvisorPanel } from '../advisor/AdvisorPanel.js';
import { ClientsPanel } from './ClientsPanel.js';
import { EndpointPanel } from './EndpointPanel.js';
import { ModelsPanel } from './ModelsPanel.js';
import { RequestsTable } from './RequestsTable.js';
import { CapturesPanel } from './CapturesPanel.js';
import { TokensPanel } from './TokensPanel.js';
import { UpstreamTable } from './UpstreamTable.js';

export function ProxyView(): React.JSX.Element {
  const loaded = useAppStore((s) => s.proxy.stats !== null);
  return (
    <section className="proxy" aria-labelledby="proxy-title" data-testid="proxy-view">
      <div className="view-title">
        <h1 id="proxy-title">Proxy</h1>
        <EndpointPanel />
      </div>
      {!loaded ? (
        <p className="empty-state" data-testid="proxy-loading">
          Waiting for the first proxy figures…
        </p>
      ) : (
        <>
          <ModelsPanel />
          <UpstreamTable />
          <AdvisorPanel />
          <ClientsPanel />
          <div className="proxy-grid">
            <RequestsTable />
            <TokensPanel />
          </div>
          <CapturesPanel />
        </>
      )}
    </section>
  );
}
