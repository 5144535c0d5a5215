import { useEffect, useState, useSyncExternalStore } from 'react';

/** The current time, refreshed every `intervalMs` while `active` (for "retry in 4 s"). */
export function useNow(active: boolean, intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return undefined;
    setNow(Date.now());
    const id = window.setInterval(() => setNow(Date.now()), intervalMs);
    return () => window.clearInterval(id);
  }, [active, intervalMs]);
  return now;
}

// One clock for every "· 3 s ago": a single interval while anything shows an
// age, instead of one timer per figure.
const clockListeners = new Set<() => void>();
let clockNow = Date.now();
let clockTimer: number | null = null;

function subscribeClock(listener: () => void): () => void {
  clockListeners.add(listener);
  if (clockTimer === null) {
    clockNow = Date.now();
    clockTimer = window.setInterval(() => {
      clockNow = Date.now();
      for (const l of [...clockListeners]) l();
    }, 1000);
  }
  return () => {
    clockListeners.delete(listener);
    if (clockListeners.size === 0 && clockTimer !== null) {
      window.clearInterval(clockTimer);
      clockTimer = null;
    }
  };
}

/** The current time, shared by every caller and refreshed once a second (ages of readings). */
export function useSharedNow(): number {
  return useSyncExternalStore(subscribeClock, () => clockNow);
}
