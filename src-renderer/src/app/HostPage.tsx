// The host detail view: time series for one host, fed by the transport.
import { useCallback } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { HostView } from '../features/host/HostView.js';
import { SshTransportPanel } from '../features/host/SshTransportPanel.js';
import { HostReadLine } from '../features/host/HostReadLine.js';
import { useAlerts } from '../features/host/use-alerts.js';
import { LogsPanel } from '../features/logs/LogsPanel.js';
import { hostByLabel } from '../store/fleet-slice.js';
import { LiveHostFigures } from './LiveHostFigures.js';
import type { CostSummaryQuery, SeriesQuery, TelemetryTick } from '../../../src-preload/contract/index.js';
import { useAppStore, useServices } from './app-context.js';

export function HostPage(): React.JSX.Element {
  const { transport } = useServices();
  const label = useAppStore((s) => s.ui.selectedHost);
  const theme = useAppStore((s) => s.ui.theme);
  const labels = useAppStore(useShallow((s) => (s.fleet.snapshot?.hosts ?? []).map((h) => h.label)));
  const selectHost = useAppStore((s) => s.selectHost);
  const loadSeries = useCallback((q: SeriesQuery) => transport.invoke('telemetry.series', q), [transport]);
  const loadCost = useCallback((q: CostSummaryQuery) => transport.invoke('cost.summary', q), [transport]);
  const subscribeTicks = useCallback((listener: (t: TelemetryTick) => void) => transport.on('telemetry.tick', listener), [transport]);
  const host = label ?? labels[0] ?? null;
  const alerts = useAlerts(transport);
  const gpuVendor = useAppStore((s) => (host === null ? null : (hostByLabel(s, host)?.gpuVendor ?? null)));
  const sshTransport = useAppStore((s) => (host === null ? undefined : hostByLabel(s, host)?.transport));
  const hostRead = useAppStore((s) => (host === null ? undefined : hostByLabel(s, host)?.read));
  const serviceKinds = useAppStore(useShallow((s) => Object.fromEntries((host === null ? [] : (hostByLabel(s, host)?.services ?? [])).map((v) => [v.id, v.kind]))));
  if (!host) return <p className="muted">No hosts yet.</p>;
  return (
    <section aria-label={`Host ${host}`}>
      <div className="host-page__picker">
        <label>
          Host{' '}
          <select value={host} onChange={(e) => selectHost(e.target.value)} data-testid="host-picker">
            {labels.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
        </label>
      </div>
      <HostView
        key={host}
        label={host}
        theme={theme}
        loadSeries={loadSeries}
        loadCost={loadCost}
        subscribeTicks={subscribeTicks}
        gpuVendor={gpuVendor}
        serviceKinds={serviceKinds}
        alerts={alerts}
        details={
          <>
            <LiveHostFigures label={host} />
            <SshTransportPanel transport={sshTransport} />
            <HostReadLine read={hostRead} />
          </>
        }
      />
      <section className="host-logs" aria-label={`Logs of ${host}`}>
        <h3>Logs</h3>
        <LogsPanel key={`logs-${host}`} label={host} testIdPrefix="host-logs" />
      </section>
    </section>
  );
}
