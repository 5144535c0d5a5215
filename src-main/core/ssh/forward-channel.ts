// Opening one direct-tcpip channel on an open client, with the deadline ssh2
// lacks: used for tunnel streams and for the jump host's hop to the target.
import type { Client, ClientChannel } from 'ssh2';
import { AppError, type Clock } from '../base/index.js';
import { SshErrorCode } from './errors.js';

export function openForwardChannel(
  client: Client,
  clock: Clock,
  srcIp: string,
  srcPort: number,
  dstHost: string,
  dstPort: number,
  openTimeoutMs: number,
): Promise<ClientChannel> {
  return new Promise<ClientChannel>((resolve, reject) => {
    let done = false;
    // ssh2 has no deadline on CHANNEL_OPEN; a host that never answers must not pin the socket.
    const timer = clock.setTimeout(() => {
      done = true;
      reject(
        new AppError(SshErrorCode.FORWARD_FAILED, `no answer to a tunnel request to ${dstHost}:${dstPort} within ${openTimeoutMs} ms`, {
          retryable: true,
          details: { dstHost, dstPort, timeoutMs: openTimeoutMs },
        }),
      );
    }, openTimeoutMs);
    try {
      client.forwardOut(srcIp, srcPort, dstHost, dstPort, (err, channel) => {
        void timer.dispose();
        if (done) {
          channel?.destroy();
          return;
        }
        done = true;
        if (err) {
          reject(
            new AppError(SshErrorCode.FORWARD_FAILED, `the host refused a tunnel to ${dstHost}:${dstPort}: ${err.message}`, {
              retryable: true,
              details: { dstHost, dstPort },
              cause: err,
            }),
          );
          return;
        }
        resolve(channel);
      });
    } catch (err) {
      void timer.dispose();
      done = true;
      reject(new AppError(SshErrorCode.NOT_CONNECTED, 'the SSH session is not open', { retryable: true, cause: err }));
    }
  });
}
