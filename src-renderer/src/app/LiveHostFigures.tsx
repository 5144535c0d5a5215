// The host view's current figures, read from the store: re-renders with each
// fleet tick on its own, never the charts beside it.
import { HostFigures } from '../features/host/HostFigures.js';
import { hostByLabel, selectPollIntervalMs } from '../store/fleet-slice.js';
import { useAppStore } from './app-context.js';

export function LiveHostFigures({ label }: { readonly label: string }): React.JSX.Element | null {
  const host = useAppStore((s) => hostByLabel(s, label));
  const pollIntervalMs = useAppStore(selectPollIntervalMs);
  return host ? <HostFigures host={host} pollIntervalMs={pollIntervalMs} /> : null;
}
