// What the fleet holds for one tunnel, whichever listener serves it: the
// console's own (LocalForward) or OpenSSH's master with the console's as
// stand-in while the link is down (MasterForward).
import type { AppError } from '../base/index.js';

export interface TunnelListener {
  readonly localPort: number;
  readonly url: string;
  /** Streams the console carries itself (a master's own are ssh's). */
  readonly activeStreams: number;
  readonly listening: boolean;
  readonly stats: { opened: number; failed: number; lastError: AppError | null };
  /** The link is gone: streams still waiting for an answer get an HTTP error naming `err`. */
  abortStreams(err: AppError): number;
  close(): Promise<void>;
}
