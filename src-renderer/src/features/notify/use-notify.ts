// The Notifications view's data: the channels (config.yaml's and the
// console's own) and the stored deliveries, newest first. Deliveries have no
// event of their own, so they are read again every few seconds while the view
// is open, and at once after a save, a removal or a test.
import { useCallback, useEffect, useState } from 'react';
import type { NotifyChannelView, NotifyDeliveryRow } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';

export const DELIVERIES_SHOWN = 50;
const REFRESH_MS = 5_000;

export interface NotifyData {
  channels: NotifyChannelView[] | null;
  deliveries: NotifyDeliveryRow[] | null;
  error: string | null;
  reload(): void;
}

export function useNotify(): NotifyData {
  const { transport } = useServices();
  const [channels, setChannels] = useState<NotifyChannelView[] | null>(null);
  const [deliveries, setDeliveries] = useState<NotifyDeliveryRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const fail = useCallback((err: unknown) => {
    const e = toContractError(err);
    setError(`${e.code}: ${e.message}`);
  }, []);
  const loadDeliveries = useCallback(() => {
    transport.invoke('notifications.deliveries', { limit: DELIVERIES_SHOWN }).then((r) => setDeliveries(r.deliveries), fail);
  }, [transport, fail]);
  const reload = useCallback(() => {
    transport.invoke('notifications.listChannels', {}).then((r) => {
      setChannels(r.channels);
      setError(null);
    }, fail);
    loadDeliveries();
  }, [transport, fail, loadDeliveries]);
  useEffect(() => {
    reload();
    const timer = setInterval(loadDeliveries, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload, loadDeliveries]);
  return { channels, deliveries, error, reload };
}
