// The console's alerts for a view: loaded once, kept current by `alert.changed`.
import { useEffect, useState } from 'react';
import type { Alert, AlertEvent } from '../../../../src-preload/contract/index.js';
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
