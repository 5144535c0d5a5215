// First screen: a summary strip, then one card per host.
import { useShallow } from 'zustand/react/shallow';
import { useAppStore } from '../../app/app-context.js';
import { selectHostLabels } from '../../store/fleet-slice.js';
import { ImportSshConfigButton } from '../hosts/ImportSshConfigDialog.js';
import { FleetSummary } from './FleetSummary.js';
import { HostCard } from './HostCard.js';
import { LazyHostCard } from './LazyHostCard.js';

/** Above this many hosts, only cards on screen are mounted (small fleets render every card). */
const LAZY_FROM_HOSTS = 12;

export function FleetView(): React.JSX.Element {
  const labels = useAppStore(useShallow(selectHostLabels));
  const loaded = useAppStore((s) => s.fleet.snapshot !== null);
  return (
    <section className="fleet" aria-labelledby="fleet-title">
      <div className="view-title">
        <h1 id="fleet-title">Fleet</h1>
        <FleetSummary />
        <ImportSshConfigButton />
      </div>
      {!loaded ? (
        <p className="empty-state" data-testid="fleet-loading">
          Waiting for the first fleet snapshot…
        </p>
      ) : labels.length === 0 ? (
        <p className="empty-state" data-testid="fleet-empty">
          No hosts configured. Add hosts to the configuration file, or start with <code>--demo</code>.
        </p>
      ) : (
        <div className="host-list">
          {labels.map((label) => (labels.length > LAZY_FROM_HOSTS ? <LazyHostCard key={label} label={label} /> : <HostCard key={label} label={label} />))}
        </div>
      )}
    </section>
  );
}
