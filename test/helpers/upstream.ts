// Upstream clients of loopback URLs for tests: a fake fleet's `upstream()` or a
// source under test gets a real UpstreamClient (the console's keep-alive rule,
// retry and classifier) of the stub server's URL. One client per URL, so a fake
// asked on every call does not open a pool each time; closeUrlClients() ends them.
import { UpstreamClient, type UpstreamClientOptions } from '../../src-main/core/upstream/index.js';

const clients = new Map<string, UpstreamClient>();

/** The client of `url` (its path is a prefix of every call), made once per URL; no on-prem guard. */
export function urlClient(url: string, options: UpstreamClientOptions = {}): UpstreamClient {
  let client = clients.get(url);
  if (!client || client.closed) {
    client = UpstreamClient.forUrl(url, { onPrem: null, purpose: 'probe' }, options);
    clients.set(url, client);
  }
  return client;
}

/** Destroys every client urlClient made. */
export async function closeUrlClients(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  await Promise.allSettled(all.map((c) => c.destroy()));
}
