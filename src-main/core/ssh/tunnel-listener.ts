// What the fleet holds for one tunnel: a public port on 127.0.0.1 that passes
// only inference and read-only paths (TunnelGate), in front of a private Unix
// socket the console's own callers use (LocalForward, or OpenSSH's master with
// the console's LocalForward as stand-in while the link is down).
import type { AppError } from '../base/index.js';

export interface TunnelListener {
  /** The public port operators and apps use. */
  readonly localPort: number;
  /** `http://127.0.0.1:<localPort>`: what the console shows as the tunnel's local URL. */
  readonly url: string;
  /** The private end (a Unix socket in the console's 0700 folder): only the fleet reads it, to bind the service's UpstreamClient to it. */
  readonly privateSocketPath: string;
  /** Streams the console carries itself (a master's own are ssh's). */
  readonly activeStreams: number;
  readonly listening: boolean;
  /** `refused`: requests the public port answered 403/400 itself. */
  readonly stats: { opened: number; failed: number; lastError: AppError | null; refused: number };
  /** The link is gone: streams still waiting for an answer get an HTTP error naming `err`. */
  abortStreams(err: AppError): number;
  close(): Promise<void>;
}
