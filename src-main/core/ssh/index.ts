// SSH sessions to GPU hosts over two transports, one face (SshSession):
// builtin (ssh2 in-process: key file, passphrase, agent, one jump hop) and
// openssh (the system client as a ControlMaster: also certificates, jump
// chains, ProxyCommand, an OpenSSH config alias as written). Host-key trust
// (known_hosts + the console's confirmations) is decided by the console on
// both, before any credential; keepalive and reconnect with backoff; `exec`
// with deadline and output cap; tunnels with a private socket for the console
// and a gated loopback port for everyone else; the ~/.ssh/config import.
export { SshErrorCode, TunnelGateErrorCode, TunnelPathErrorCode } from './errors.js';
export {
  SshConnection,
  type SshConnectionOptions,
  type SshConnectionState,
  type SshStateChange,
  type SshSession,
  type SshTransportInfo,
  type SshHostTarget,
  type SshClientFactory,
  type SshServices,
  type HostKeyProblem,
  defaultSshServices,
} from './connection.js';
export { tcpDialer, systemResolver, type Dialer, type Resolver } from './dialer.js';
export { DEFAULT_TRANSIENT_FAILURES_MAX, expectRecovery, failureKindOf, type LinkFailureKind, type RecoveryExpectation } from './recovery.js';
export { MemoryTrustStore, KeyValueTrustStore, type HostKeyTrustStore, type TrustedHostKey } from './trust-store.js';
export { MemoryPassphraseCache, type PassphraseProvider } from './passphrases.js';
export { parseJumpHost, type JumpSpec } from './jump.js';
export { renderCommand, templateParameters } from './command-template.js';
export { loadSshConfigTree, type LoadedSshConfig } from './ssh-config-files.js';
export { commandEffect, type CommandDirective } from './ssh-config-commands.js';
export { importSshConfig, splitConfigLines, type SshConfigLine, type ImportedHost, type SkippedHost, type SshConfigIssue, type SshConfigImport, type SshConfigImportOptions } from './ssh-config.js';
export { type ExecOptions, type ExecResult } from './exec.js';
export { killOnCloseCommand, type ExecStream, type ExecStreamOptions, type ExecChunk, type ExecExit } from './exec-stream.js';
export { LocalForward, type LocalForwardOptions, type ForwardChannelOpener } from './local-forward.js';
export { MasterForward, canMasterListen, type MasterListener, type MasterForwardOptions } from './master-forward.js';
export type { TunnelListener } from './tunnel-listener.js';
export { GatedTunnel, type GatedTunnelOptions } from './gated-tunnel.js';
export { TunnelGate, type TunnelGateOptions } from './tunnel-gate.js';
export { TunnelSockets, type TunnelSocketsOptions } from './tunnel-sockets.js';
export { TUNNEL_ALLOWED, V1_ADMIN, checkTunnelHost, checkTunnelRequest, canonicalPath, isAllowedPath, type TunnelVerdict } from './tunnel-paths.js';
export { KnownHosts, knownHostsName, hostMatches, type HostKeyVerdict, type KnownHostEntry } from './known-hosts.js';
export { sha256Fingerprint, isSha256Fingerprint } from './fingerprint.js';
export { loadPrivateKey, loadKeyFile, checkKeyFile, readKeyFile, MAX_KEY_FILE_BYTES } from './keys.js';
export { shellQuote, shellJoin } from './shell-quote.js';
export { mergeHostsIntoYaml, hostEntry, expandTilde, readConfigText, writeFileAtomically, type MergeResult } from './inventory.js';
export { OpenSshSession, type OpenSshSessionOptions } from './openssh-session.js';
export { OpenSshHelperServer } from './openssh-helper.js';
export { OpenSshProbe, chooseTransport, builtinGaps, assertBuiltinCan, type TransportChoice, type TransportKind } from './transport.js';
export { generatedConfig, parseOpenSshVersion, MAX_SOCKET_PATH_BYTES, MIN_OPENSSH } from './openssh-config.js';
export { parseListeners, type ListenerRow } from './ss-listeners.js';
