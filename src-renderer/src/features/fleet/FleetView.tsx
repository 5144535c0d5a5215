// First screen: a summary strip, then the fleet: the dense overview (the
// default above AUTO_OVERVIEW_FROM hosts) or one card per host.
import { useShallow } from 'zustand/react/shallow';
import { useAppStore } from '../../app/app-context.js';
import { selectHostLabels } from '../../store/fleet-slice.js';
import { ImportSshConfigButton } from '../hosts/ImportSshConfigDialog.js';
import { FleetSummary } from './FleetSummary.js';
import { HostCard } from './HostCard.js';
import { LazyHostCard } from './LazyHostCard.js';
import { FleetOverview } from './overview/FleetOverview.js';
import { showsOverview, type OverviewPrefs } from './overview/overview-query.js';
import { useOverviewPrefs } from './overview/use-overview-prefs.js';

/** Above this many hosts, only cards on screen are mounted (small fleets render every card). */
const LAZY_FROM_HOSTS = 12;

function ModeSwitch({ overview, onPrefs }: { readonly overview: boolean; readonly onPrefs: (c: Partial<OverviewPrefs>) => void }): React.JSX.Element {
  return (
    <div className="fleet-modes" role="group" aria-label="Fleet layout">
      <button type="button" className="button" aria-pressed={overview} onClick={() => onPrefs({ mode: 'overview' })} data-testid="fleet-mode-overview">
        Overview
      </button>
      <button type="button" className="button" aria-pressed={!overview} onClick={() => onPrefs({ mode: 'cards' })} data-testid="fleet-mode-cards">
        Cards
      </button>
    </div>
  );
}

export function FleetView(): React.JSX.Element {
  const labels = useAppStore(useShallow(selectHostLabels));
  const loaded = useAppStore((s) => s.fleet.snapshot !== null);
  const [prefs, setPrefs] = useOverviewPrefs();
  const overview = showsOverview(prefs, labels.length);
  const tools = (
    <>
      <ModeSwitch overview={overview} onPrefs={setPrefs} />
      <ImportSshConfigButton />
    </>
  );
  return (
    <section className="fleet" aria-labelledby="fleet-title" data-layout={overview ? 'overview' : 'cards'}>
      <div className="view-title fleet-title">
        <h1 id="fleet-title">Fleet</h1>
        <FleetSummary />
      </div>
      {!loaded ? (
        <p className="empty-state" data-testid="fleet-loading">
          Waiting for the first fleet snapshot…
        </p>
      ) : overview ? (
        <FleetOverview prefs={prefs} onPrefs={setPrefs} tools={tools} />
      ) : (
        <>
          <div className="fleet-title__tools">{tools}</div>
          {labels.length === 0 ? (
            <p className="empty-state" data-testid="fleet-empty">
              No hosts configured. Add hosts to the configuration file, or start with <code>--demo</code>.
            </p>
          ) : (
            <div className="host-list">
              {labels.map((label) => (labels.length > LAZY_FROM_HOSTS ? <LazyHostCard key={label} label={label} /> : <HostCard key={label} label={label} />))}
            </div>
          )}
        </>
      )}
    </section>
  );
}
