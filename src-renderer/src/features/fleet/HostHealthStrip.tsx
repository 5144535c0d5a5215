// One line of host health on the fleet card: root disk, RAM, swap, load,
// uptime, a recent reboot, and the host's process flags and GPU faults as a
// link to the host view. Low disk is said in words, not only in colour;
// unknown is "—" with the reason in the title. Kept to one wrapping line so a
// 64-host fleet's cards stay short.
import './host-health.css';
import { memo } from 'react';
import type { HostView } from '../../../../src-preload/contract/index.js';
import { useAppStore } from '../../app/app-context.js';
import { Badge } from '../../components/Badge.js';
import { useSharedNow } from '../../components/use-now.js';
import { dataValue } from '../../format/format.js';
import { faultCounts, healthMissing, loadFact, memoryFact, rebootBadge, rootDiskFact, staleNote, swapFact, uptimeFact, type Fact } from './host-health-facts.js';
import { issueSummary } from './host-health-summary.js';

export interface HostHealthStripProps {
  readonly host: HostView;
}

function FactItem({ name, fact, testId }: { readonly name: string; readonly fact: Fact; readonly testId: string }): React.JSX.Element {
  return (
    <div className={fact.flag ? 'host-health__fact host-health__fact--flagged' : 'host-health__fact'}>
      <dt>{name}</dt>
      <dd className="num" data-testid={testId} data-value={dataValue(fact.value)} data-known={fact.known ? 'true' : 'false'} title={fact.title}>
        {fact.text}
        {fact.flag ? (
          <span className="host-health__flag" data-testid={`${testId}-flag`}>
            {' '}
            <span aria-hidden="true">⚠ </span>
            {fact.flag}
          </span>
        ) : null}
      </dd>
    </div>
  );
}

export const HostHealthStrip = memo(function HostHealthStrip({ host }: HostHealthStripProps): React.JSX.Element {
  const now = useSharedNow();
  const selectHost = useAppStore((s) => s.selectHost);
  const setView = useAppStore((s) => s.setView);
  const health = host.health;
  const missing = healthMissing(health);
  const stale = staleNote(health, now);
  const reboot = rebootBadge(health, now);
  const issues = issueSummary(faultCounts(host));
  const open = (): void => {
    selectHost(host.label);
    setView('host');
  };
  return (
    <div className={`host-health${stale ? ' is-stale' : ''}`} data-testid="host-health" aria-label={`${host.label} host health`} role="group">
      <dl className="host-health__facts">
        <FactItem name="Disk /" fact={rootDiskFact(health)} testId="health-disk" />
        <FactItem name="RAM" fact={memoryFact(health)} testId="health-ram" />
        <FactItem name="Swap" fact={swapFact(health)} testId="health-swap" />
        <FactItem name="Load" fact={loadFact(health)} testId="health-load" />
        <FactItem name="Up" fact={uptimeFact(health)} testId="health-uptime" />
      </dl>
      {stale ? (
        <Badge tone="warn" testId="health-stale" title={stale.title}>
          {stale.text}
        </Badge>
      ) : null}
      {reboot ? (
        <Badge tone="info" testId="health-rebooted" title={`A new boot id: the host rebooted (boot id ${health?.bootId ?? '—'})`}>
          {reboot}
        </Badge>
      ) : null}
      {missing === null || host.gpuProcesses !== undefined ? (
        <button type="button" className={`host-health__issues${issues.count > 0 ? ' host-health__issues--some' : ''}`} data-testid="health-issues" data-count={issues.count} title={issues.title} onClick={open}>
          {issues.count > 0 ? <span aria-hidden="true">⚠ </span> : null}
          {issues.text}
        </button>
      ) : null}
    </div>
  );
});
