// SSH sessions to GPU hosts: host-key trust (known_hosts + operator-confirmed
// fingerprints), key-file and agent auth, keepalive and reconnect with backoff,
// `exec` with deadline and output cap, and loopback-only local port forwards.
export { SshErrorCode } from './errors.js';
export {
  SshConnection,
  type SshConnectionOptions,
  type SshConnectionState,
  type SshStateChange,
  type SshSession,
  type SshHostTarget,
  type SshClientFactory,
} from './connection.js';
export { type ExecOptions, type ExecResult } from './exec.js';
export { LocalForward, type LocalForwardOptions, type ForwardChannelOpener } from './local-forward.js';
export { KnownHosts, knownHostsName, hostMatches, type HostKeyVerdict, type KnownHostEntry } from './known-hosts.js';
export { sha256Fingerprint, isSha256Fingerprint } from './fingerprint.js';
export { loadPrivateKey } from './keys.js';
export { shellQuote, shellJoin } from './shell-quote.js';
