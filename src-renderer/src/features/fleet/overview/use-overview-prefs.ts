// The overview's choices, kept in this browser's storage (the theme lives
// there too): read once through the schema, written on each change.
import { useCallback, useState } from 'react';
import { DEFAULT_PREFS, parsePrefs, type OverviewPrefs } from './overview-query.js';

const KEY = 'gpu-console.fleet-overview';

function load(): OverviewPrefs {
  try {
    return parsePrefs(localStorage.getItem(KEY));
  } catch {
    return DEFAULT_PREFS; // storage refused (private mode, policy): the defaults, not an error
  }
}

export function useOverviewPrefs(): [OverviewPrefs, (change: Partial<OverviewPrefs>) => void] {
  const [prefs, setPrefs] = useState(load);
  const update = useCallback((change: Partial<OverviewPrefs>) => {
    setPrefs((prev) => {
      const next = { ...prev, ...change };
      try {
        localStorage.setItem(KEY, JSON.stringify(next));
      } catch {
        // not kept across restarts; the view still follows the choice
      }
      return next;
    });
  }, []);
  return [prefs, update];
}
