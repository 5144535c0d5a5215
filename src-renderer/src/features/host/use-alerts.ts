// The console's alerts for a view: loaded once, kept current by `alert.changed`.
import { useEffect, useState } from 'react';
import type { Alert, AlertEvent, Silence } from '../../../../src-preload/contract/index.js';
import type { Transport } from '../../transport/index.js';
import { applyAlertEvent, listWithEvents } from './alert-list-state.js';

export function useAlerts(transport: Transport): readonly Alert[] {
  const [alerts, setAlerts] = useState<readonly Alert[]>([]);
  useEffect(() => {
    let listed = false;
    let live = true;
    const early: AlertEvent[] = [];
    const off = transport.on('alert.changed', (event) => {
      if (!listed) early.push(event);
      else setAlerts((prev) => applyAlertEvent(prev, event));
    });
    transport.invoke('alerts.list', {}).then(
      (r) => {
        if (!live) return;
        listed = true;
        setAlerts(listWithEvents(r.alerts, early));
      },
      () => {
        // Without the list the events still show what is raised from now on.
        listed = true;
        if (live) setAlerts(listWithEvents([], early));
      },
    );
    return () => {
      live = false;
      off();
    };
  }, [transport]);
  return alerts;
}

/** The silences in force: loaded with the alerts, replaced by each `alerts.silences` event. Null transport: none. */
export function useSilences(transport: Transport | null): readonly Silence[] {
  const [silences, setSilences] = useState<readonly Silence[]>([]);
  useEffect(() => {
    if (transport === null) return;
    let live = true;
    let pushed = false;
    const off = transport.on('alerts.silences', (event) => {
      pushed = true;
      setSilences(event.silences);
    });
    transport.invoke('alerts.list', {}).then(
      (r) => {
        // An event that came first is newer than this answer.
        if (live && !pushed) setSilences(r.silences);
      },
      () => undefined,
    );
    return () => {
      live = false;
      off();
    };
  }, [transport]);
  return silences;
}
