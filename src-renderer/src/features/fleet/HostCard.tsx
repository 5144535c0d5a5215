// One host: identity and connection state, its GPUs, its model services.
import { memo } from 'react';
import { useAppStore } from '../../app/app-context.js';
import { Badge } from '../../components/Badge.js';
import { useNow } from '../../components/use-now.js';
import { formatAgo, formatUntil, formatUsdPerHour } from '../../format/format.js';
import { hostByLabel, selectPollIntervalMs } from '../../store/fleet-slice.js';
import { HostKeyAlert } from '../hosts/HostKeyAlert.js';
import { PassphrasePrompt } from '../hosts/PassphrasePrompt.js';
import { TrustBanner } from '../hosts/TrustBanner.js';
import { GpuTable } from './GpuTable.js';
import { HostActions } from './HostActions.js';
import { HostHealthStrip } from './HostHealthStrip.js';
import { HOST_STATE_TONE } from './host-state.js';
import { ServiceTable } from './ServiceTable.js';

export interface HostCardProps {
  readonly label: string;
}

export const HostCard = memo(function HostCard({ label }: HostCardProps): React.JSX.Element | null {
  const host = useAppStore((s) => hostByLabel(s, label));
  const statusMessage = useAppStore((s) => s.fleet.statusMessages[label] ?? null);
  const pollIntervalMs = useAppStore(selectPollIntervalMs);
  const now = useNow(host?.nextRetryAt != null || host?.lastError != null);
  if (host === undefined) return null;
  const headingId = `host-${label}-title`;
  return (
    <article className={`host-card host-card--${host.state}`} data-testid={`host-card-${label}`} aria-labelledby={headingId}>
      <header className="host-card__header">
        <div className="host-card__identity">
          <h2 id={headingId} className="host-card__label">
            {host.label}
          </h2>
          <Badge tone={HOST_STATE_TONE[host.state]} testId="host-state" value={host.state}>
            {host.state}
          </Badge>
          <code className="host-card__address">{host.address}</code>
          {host.jumpHost ? <span className="muted host-card__jump">via {host.jumpHost}</span> : null}
          {host.tags ? (
            <span className="muted host-card__tags" data-testid="host-tags">
              {Object.entries(host.tags)
                .map(([k, v]) => `${k}: ${v}`)
                .join(' · ')}
            </span>
          ) : null}
        </div>
        <dl className="host-card__facts">
          <div>
            <dt>GPUs</dt>
            <dd className="num">{host.gpus.length > 0 ? `${host.gpus.length}× ${host.gpuModel ?? host.gpus[0]?.name ?? ''}` : (host.gpuModel ?? '—')}</dd>
          </div>
          <div>
            <dt>Price</dt>
            <dd className="num" data-testid="price" data-value={host.pricePerHourUsd ?? ''}>
              {formatUsdPerHour(host.pricePerHourUsd)}
            </dd>
          </div>
        </dl>
        <HostActions label={host.label} state={host.state} />
      </header>
      {host.health !== undefined || host.gpuProcesses !== undefined ? <HostHealthStrip host={host} /> : null}
      {host.lastError || statusMessage || host.nextRetryAt !== null ? (
        <p className={`host-card__status${host.state === 'failed' ? ' host-card__status--error' : ''}`} data-testid="host-error">
          {host.lastError ? (
            <>
              <span className="code">{host.lastError.code}</span> {host.lastError.message}{' '}
              <span className="muted">({formatAgo(host.lastError.at, now)})</span>
            </>
          ) : (
            statusMessage
          )}
          {host.nextRetryAt !== null ? (
            <span className="host-card__retry" data-testid="next-retry" data-value={host.nextRetryAt}>
              {' '}
              · next retry {formatUntil(host.nextRetryAt, now)}
            </span>
          ) : null}
        </p>
      ) : null}
      {host.state === 'awaiting-trust' && host.hostKey?.status === 'unknown' ? (
        <TrustBanner label={host.label} hostKey={host.hostKey} />
      ) : host.state === 'awaiting-trust' ? (
        <p className="host-card__trust" data-testid="host-trust">
          Unknown host key{host.hostKeyFingerprint ? ' ' : ''}
          {host.hostKeyFingerprint ? <code>{host.hostKeyFingerprint}</code> : null} — compare it with the host before trusting it.
        </p>
      ) : null}
      {/* A changed or revoked key always ends the session in `failed`; in any other state the problem is an earlier attempt's. */}
      {host.hostKey && host.hostKey.status !== 'unknown' && host.state === 'failed' ? <HostKeyAlert label={host.label} hostKey={host.hostKey} /> : null}
      {host.credentialPrompt ? <PassphrasePrompt label={host.label} prompt={host.credentialPrompt} /> : null}
      <div className="host-card__body">
        <GpuTable
          label={host.label}
          gpus={host.gpus}
          stale={host.gpuStale}
          staleReason={host.gpuStaleReason}
          vendor={host.gpuVendor ?? null}
          source={host.gpuSource ?? null}
          issues={host.gpuIssues}
          pollIntervalMs={pollIntervalMs}
        />
        <ServiceTable label={host.label} services={host.services} pollIntervalMs={pollIntervalMs} />
      </div>
    </article>
  );
});
