// Feeds the store from a transport: the first app.info and snapshot, then events.
// After a dropped event stream comes back, both are read again.
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
