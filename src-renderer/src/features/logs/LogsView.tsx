// The Logs view: any service's log, followed live or read back, filtered,
// with known failure lines marked (issue #29 item 1).
import { LogsPanel } from './LogsPanel.js';

export function LogsView(): React.JSX.Element {
  return (
    <section className="logs-view" aria-label="Logs">
      <h2>Logs</h2>
      <LogsPanel testIdPrefix="logs" />
    </section>
  );
}
