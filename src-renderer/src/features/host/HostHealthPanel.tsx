// The host view's "Host health" section: the figures the card shows, with
// where they come from and their age, the disks the console watches, the
// model caches' sizes and Docker's root (or why it is unknown).
import type { HostHealthView } from '../../../../src-preload/contract/index.js';
import { Badge } from '../../components/Badge.js';
import { MeterBar } from '../../components/MeterBar.js';
import { useSharedNow } from '../../components/use-now.js';
import { formatAgo, formatDuration } from '../../format/format.js';
import { healthMissing, loadFact, memoryFact, rebootBadge, rootDiskFact, staleNote, swapFact, uptimeFact, type Fact } from '../fleet/host-health-facts.js';
import { cacheRows, diskRows, dockerText } from './host-health-view.js';

function Figure({ name, fact, testId }: { readonly name: string; readonly fact: Fact; readonly testId: string }): React.JSX.Element {
  return (
    <div>
      <dt>{name}</dt>
      <dd className={`num${fact.flag ? ' text-warn' : ''}`} title={fact.title} data-testid={testId} data-known={fact.known ? 'true' : 'false'}>
        {fact.text}
        {fact.flag ? <strong className="health-flag"> ⚠ {fact.flag}</strong> : null}
      </dd>
    </div>
  );
}

function DisksTable({ health }: { readonly health: HostHealthView }): React.JSX.Element {
  const rows = diskRows(health);
  if (rows.length === 0) return <p className="muted">No disk read yet.</p>;
  return (
    <table className="data-table health-table" data-testid="disks-table">
      <caption className="visually-hidden">Disks</caption>
      <thead>
        <tr>
          <th scope="col">Kind</th>
          <th scope="col">Path</th>
          <th scope="col">Mount</th>
          <th scope="col" className="col-num">Free / total</th>
          <th scope="col" className="health-table__used">Used</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key} data-testid="disk-row" data-kind={r.kind}>
            <td>{r.kind}</td>
            <td>
              <code className="health-table__path">{r.path}</code>
            </td>
            <td>
              <code className="health-table__path">{r.mount}</code>
            </td>
            <td className={`col-num num${r.flag ? ' text-warn' : ''}`}>
              {r.freeTotal}
              {r.flag ? <strong className="health-flag"> ⚠ {r.flag}</strong> : null}
            </td>
            <td className="health-table__used">
              {r.error !== null ? (
                <span className="text-warn" data-testid="disk-error">
                  {r.error}
                </span>
              ) : (
                <MeterBar pct={r.usedPct} text={r.used} label={`${r.path} used`} warnAt={90} alarmAt={95} />
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function HostHealthPanel({ health }: { readonly health: HostHealthView | undefined }): React.JSX.Element {
  const now = useSharedNow();
  const missing = healthMissing(health);
  const stale = staleNote(health, now);
  const reboot = rebootBadge(health, now);
  return (
    <section className="health-panel" aria-labelledby="host-health-title" data-testid="host-health-panel">
      <h3 id="host-health-title" className="health-panel__title">
        Host health
        {health?.atMs != null ? (
          <span className="muted health-panel__meta" title={health.source}>
            {' '}
            · read {formatAgo(health.atMs, now)}, every {formatDuration(health.intervalMs)}
          </span>
        ) : null}
        {stale ? (
          <Badge tone="warn" testId="health-panel-stale" title={stale.title}>
            {stale.text}
          </Badge>
        ) : null}
        {reboot ? <Badge tone="info">{reboot}</Badge> : null}
      </h3>
      {missing !== null ? <p className="muted" data-testid="health-missing">{missing}</p> : null}
      {health !== undefined && missing === null ? (
        <>
          <dl className="health-panel__facts">
            <Figure name="Disk /" fact={rootDiskFact(health)} testId="hv-disk" />
            <Figure name="RAM used" fact={memoryFact(health)} testId="hv-ram" />
            <Figure name="Swap used" fact={swapFact(health)} testId="hv-swap" />
            <Figure name="Load 1 min" fact={loadFact(health)} testId="hv-load" />
            <Figure name="Uptime" fact={uptimeFact(health)} testId="hv-uptime" />
            <div>
              <dt>Docker root</dt>
              <dd>{dockerLine(health)}</dd>
            </div>
          </dl>
          {health.issues.length > 0 ? (
            <ul className="health-panel__issues" data-testid="health-issues-list">
              {health.issues.map((i) => (
                <li key={i} className="text-warn">
                  {i}
                </li>
              ))}
            </ul>
          ) : null}
          <DisksTable health={health} />
          <CacheSizes health={health} now={now} />
        </>
      ) : null}
    </section>
  );
}

function dockerLine(health: HostHealthView): React.ReactNode {
  const d = dockerText(health);
  if (d === null) return <span title="Docker is not asked about on this host's fast rounds yet">—</span>;
  return d.known ? <code data-testid="docker-root">{d.text}</code> : <span className="muted" data-testid="docker-root">{d.text}</span>;
}

function CacheSizes({ health, now }: { readonly health: HostHealthView; readonly now: number }): React.JSX.Element | null {
  const rows = cacheRows(health, now);
  if (rows.length === 0) return null;
  return (
    <p className="health-panel__caches" data-testid="cache-sizes">
      <span className="muted">Model cache size: </span>
      {rows.map((c, i) => (
        <span key={c.path} title={c.title}>
          {i > 0 ? ' · ' : ''}
          <code>{c.path}</code> <span className="num">{c.size}</span>
        </span>
      ))}
      {health.cacheSizesAtMs !== null ? <span className="muted"> (measured {formatAgo(health.cacheSizesAtMs, now)})</span> : null}
    </p>
  );
}
