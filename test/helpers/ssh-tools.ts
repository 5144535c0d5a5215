// Small things the SSH tests share: whether this machine has the OpenSSH
// client (tests that need it skip, saying so, where it is absent), and a free
// loopback port for a server the test starts.
import { execFileSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';

export const HAVE_OPENSSH = (() => {
  try {
    execFileSync('ssh', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** A port free on 127.0.0.1 right now (the caller binds it next). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const p = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return p;
}
