// Feeds the store from a transport: the first app.info and snapshots, then
// events (each payload already parsed by the transport with the contract's
// schema). After a dropped event stream comes back, the snapshots are read again.
// The lists a view reads on mount (actions.list, notifications.list) it writes
// into the same slices, which these events then keep current.
import type { Transport } from '../transport/transport.js';
import { toContractError } from '../transport/transport.js';
import type { AppStore } from './store.js';

export function wireTransport(transport: Transport, store: AppStore): () => void {
  const s = store.getState;
  const offs: Array<() => void> = [];
  let disposed = false;

  const refresh = async (): Promise<void> => {
    const [info, snapshot, proxy] = await Promise.allSettled([
      transport.invoke('app.info', {}),
      transport.invoke('fleet.snapshot', {}),
      transport.invoke('proxy.snapshot', {}),
    ]);
    if (disposed) return;
    if (info.status === 'fulfilled') s().setInfo(info.value);
    else s().setInfoError(toContractError(info.reason));
    if (snapshot.status === 'fulfilled') s().applySnapshot(snapshot.value);
    if (proxy.status === 'fulfilled') s().applyProxyStats(proxy.value);
  };
  const refreshLogged = (): void => {
    refresh().catch((error: unknown) => console.warn('[wire] refresh failed', error));
  };

  offs.push(transport.on('fleet.tick', (snapshot) => s().applySnapshot(snapshot)));
  offs.push(transport.on('host.status', (event) => s().applyHostStatus(event)));
  offs.push(transport.on('config.changed', (event) => s().applyConfigChanged(event)));
  offs.push(transport.on('proxy.stats', (stats) => s().applyProxyStats(stats)));
  offs.push(transport.on('action.changed', (action) => s().applyActionChanged(action)));
  offs.push(transport.on('action.standing', (standing) => s().applyStandingChanged(standing)));
  offs.push(transport.on('bench.progress', (progress) => s().applyBenchProgress(progress)));
  offs.push(transport.on('report.progress', (progress) => s().applyReportProgress(progress)));
  offs.push(transport.on('notifications.notice', (notice) => s().applyNotice(notice)));
  offs.push(transport.on('notifications.open', (request) => s().applyNotificationOpen(request)));

  let wasLost = false;
  offs.push(
    transport.onConnection((connection) => {
      s().setConnection(connection);
      if (connection.status === 'lost') wasLost = true;
      if (connection.status === 'open' && wasLost) {
        wasLost = false;
        refreshLogged();
      }
    }),
  );
  refreshLogged();

  return () => {
    disposed = true;
    for (const off of offs.splice(0)) off();
  };
}
