// Stable codes for everything that can go wrong on an SSH session. Callers
// (fleet, UI) match on these, never on ssh2's messages.

export const SshErrorCode = {
  KEY_UNREADABLE: 'SSH_KEY_UNREADABLE',
  /** A key or certificate path that names no regular file (a FIFO, a device, a folder, a socket). */
  KEY_NOT_A_FILE: 'SSH_KEY_NOT_A_FILE',
  /** A key or certificate file larger than any key is (MAX_KEY_FILE_BYTES): not read. */
  KEY_TOO_LARGE: 'SSH_KEY_TOO_LARGE',
  PASSPHRASE_REQUIRED: 'SSH_PASSPHRASE_REQUIRED',
  PASSPHRASE_INCORRECT: 'SSH_PASSPHRASE_INCORRECT',
  NO_AUTH_METHOD: 'SSH_NO_AUTH_METHOD',
  AUTH_FAILED: 'SSH_AUTH_FAILED',
  CONNECT_FAILED: 'SSH_CONNECT_FAILED',
  HOST_UNRESOLVED: 'SSH_HOST_UNRESOLVED',
  JUMP_FAILED: 'SSH_JUMP_FAILED',
  TIMEOUT: 'SSH_TIMEOUT',
  HOST_KEY_UNKNOWN: 'SSH_HOST_KEY_UNKNOWN',
  HOST_KEY_CHANGED: 'SSH_HOST_KEY_CHANGED',
  HOST_KEY_REVOKED: 'SSH_HOST_KEY_REVOKED',
  KNOWN_HOSTS_UNREADABLE: 'SSH_KNOWN_HOSTS_UNREADABLE',
  DISCONNECTED: 'SSH_DISCONNECTED',
  NOT_CONNECTED: 'SSH_NOT_CONNECTED',
  UNSUPPORTED: 'SSH_UNSUPPORTED',
  INVALID_FINGERPRINT: 'SSH_INVALID_FINGERPRINT',
  FINGERPRINT_MISMATCH: 'SSH_FINGERPRINT_MISMATCH',
  TRUST_REFUSED: 'SSH_TRUST_REFUSED',
  NOTHING_TO_TRUST: 'SSH_NOTHING_TO_TRUST',
  /** An answer or a refusal for a host that is not asking anything now. */
  NO_PROMPT: 'SSH_NO_PROMPT',
  /** Forgetting a console-trusted key needs its fingerprint and the host label typed; a mismatch names what was expected. */
  FORGET_MISMATCH: 'SSH_FORGET_MISMATCH',
  EXEC_FAILED: 'SSH_EXEC_FAILED',
  EXEC_TIMEOUT: 'SSH_EXEC_TIMEOUT',
  FORWARD_LISTEN_FAILED: 'SSH_FORWARD_LISTEN_FAILED',
  FORWARD_FAILED: 'SSH_FORWARD_FAILED',
  CANCELLED: 'SSH_CANCELLED',
  /** The host's settings need the openssh transport (certificates, ProxyCommand, several jump hops, an OpenSSH config alias). */
  NEEDS_OPENSSH: 'SSH_NEEDS_OPENSSH',
  /** No OpenSSH client where the openssh transport looked for one. */
  OPENSSH_MISSING: 'SSH_OPENSSH_MISSING',
  /** The OpenSSH client is older than the features the transport uses. */
  OPENSSH_TOO_OLD: 'SSH_OPENSSH_TOO_OLD',
  /** The control socket's path is longer than Unix sockets allow. */
  CONTROL_PATH_TOO_LONG: 'SSH_CONTROL_PATH_TOO_LONG',
  /** ssh refused the configuration it was given (a bad line, a failing Match exec, an unreadable Include). */
  OPENSSH_CONFIG_INVALID: 'SSH_OPENSSH_CONFIG_INVALID',
  /** The console's askpass / known-hosts helper could not be set up. */
  OPENSSH_HELPER_FAILED: 'SSH_OPENSSH_HELPER_FAILED',
  /** The user certificate cannot work: expired, not yet valid, or for other principals. */
  CERTIFICATE_INVALID: 'SSH_CERTIFICATE_INVALID',
  TEMPLATE_INVALID: 'SSH_TEMPLATE_INVALID',
  CONFIG_UNREADABLE: 'SSH_CONFIG_UNREADABLE',
  CONFIG_UNSUPPORTED: 'SSH_CONFIG_UNSUPPORTED',
  /** The import source asked for is not offered here (a file dialog in the headless console). */
  IMPORT_SOURCE_UNAVAILABLE: 'SSH_IMPORT_SOURCE_UNAVAILABLE',
  /** An apply named a preview this console no longer holds (expired, or another start). */
  IMPORT_PREVIEW_UNKNOWN: 'SSH_IMPORT_PREVIEW_UNKNOWN',
  /** An apply chose a host that a command line of the file applies to (ProxyCommand, Match exec, …) without acknowledging that line. */
  IMPORT_COMMAND_NOT_ACKNOWLEDGED: 'SSH_IMPORT_COMMAND_NOT_ACKNOWLEDGED',
} as const;

export type SshErrorCode = (typeof SshErrorCode)[keyof typeof SshErrorCode];

export const TunnelGateErrorCode = {
  /** The private socket did not take the connection (the tunnel is changing hands or closing). */
  PRIVATE_UNREACHABLE: 'TUNNEL_PRIVATE_UNREACHABLE',
  /** The connection to the private socket failed before the model server answered. */
  UPSTREAM_FAILED: 'TUNNEL_UPSTREAM_FAILED',
} as const;
export type TunnelGateErrorCode = (typeof TunnelGateErrorCode)[keyof typeof TunnelGateErrorCode];

export const TunnelPathErrorCode = {
  ADMIN_PATH_REFUSED: 'TUNNEL_ADMIN_PATH_REFUSED',
  TARGET_REFUSED: 'TUNNEL_REQUEST_TARGET_REFUSED',
  HOST_REFUSED: 'TUNNEL_HOST_REFUSED',
} as const;
export type TunnelPathErrorCode = (typeof TunnelPathErrorCode)[keyof typeof TunnelPathErrorCode];

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    ssh: SshErrorCode;
    tunnelGate: TunnelGateErrorCode;
    tunnelPath: TunnelPathErrorCode;
  }
}
