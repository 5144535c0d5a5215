// Stable codes for the fleet engine.

export const FleetErrorCode = {
  UNKNOWN_HOST: 'FLEET_UNKNOWN_HOST',
  UNKNOWN_SERVICE: 'FLEET_UNKNOWN_SERVICE',
  TUNNEL_NOT_READY: 'FLEET_TUNNEL_NOT_READY',
  HOST_NOT_CONNECTED: 'FLEET_HOST_NOT_CONNECTED',
  DISPOSED: 'FLEET_DISPOSED',
  PROBE_FAILED: 'FLEET_PROBE_FAILED',
  PROBE_TIMEOUT: 'FLEET_PROBE_TIMEOUT',
  PROBE_HTTP_STATUS: 'FLEET_PROBE_HTTP_STATUS',
  NO_IDENTITY_FILE: 'FLEET_NO_IDENTITY_FILE',
  // host health (fleet/host-health*.ts) and GPU processes (fleet/gpu-process-match.ts)
  HEALTH_EXEC_FAILED: 'FLEET_HEALTH_EXEC_FAILED',
  HEALTH_UNPARSEABLE: 'FLEET_HEALTH_UNPARSEABLE',
  HEALTH_DF_UNEXPECTED: 'FLEET_HEALTH_DF_UNEXPECTED',
  HEALTH_PATH_MISSING: 'FLEET_HEALTH_PATH_MISSING',
  HEALTH_DOCKER_UNAVAILABLE: 'FLEET_HEALTH_DOCKER_UNAVAILABLE',
  HEALTH_CACHE_SIZE_UNKNOWN: 'FLEET_HEALTH_CACHE_SIZE_UNKNOWN',
  HEALTH_LIST_CAPPED: 'FLEET_HEALTH_LIST_CAPPED',
  GPU_PROCESS_UNKNOWN: 'FLEET_GPU_PROCESS_UNKNOWN',
  PORT_SECOND_LISTENER: 'FLEET_PORT_SECOND_LISTENER',
  PORT_STALE_LISTENER: 'FLEET_PORT_STALE_LISTENER',
  // GPU faults (fleet/gpu-faults*.ts)
  FAULTS_QUERY_FAILED: 'FLEET_FAULTS_QUERY_FAILED',
  FAULTS_NOT_SUPPORTED: 'FLEET_FAULTS_NOT_SUPPORTED',
  FAULTS_OLD_FIELD_NAMES: 'FLEET_FAULTS_OLD_FIELD_NAMES',
  KERNEL_LOG_DENIED: 'FLEET_KERNEL_LOG_DENIED',
  // the per-host collector (fleet/collector*.ts): one exec a poll reads every part
  /** The collector's answer had no frames: the host's shell ran something else (a forced command, another shell). */
  COLLECTOR_NO_ANSWER: 'FLEET_COLLECTOR_NO_ANSWER',
  /** The collector's exec failed as a whole (SSH error, its deadline): every part of that poll fails with it. */
  COLLECTOR_FAILED: 'FLEET_COLLECTOR_FAILED',
  /** The answer ended before this part's frame closed (output cut, or over the cap). */
  COLLECTOR_CUT: 'FLEET_COLLECTOR_CUT',
  /** This part ran past its own deadline on the host (curl --max-time, timeout). */
  COLLECTOR_PART_TIMEOUT: 'FLEET_COLLECTOR_PART_TIMEOUT',
  /** curl on the host could not read this endpoint (refused, reset): its message is kept. */
  COLLECTOR_PART_FAILED: 'FLEET_COLLECTOR_PART_FAILED',
  /** The host cannot run the collector (not a POSIX shell, no curl, curl too old): it is read through tunnels. */
  COLLECTOR_UNSUPPORTED: 'FLEET_COLLECTOR_UNSUPPORTED',
  // the resident collector (fleet/collector-resident*.ts): one exec that stays open, a request line a poll
  /** The resident collector's channel ended (exit, EOF, the link) or never said it was ready: reopened later. */
  COLLECTOR_CHANNEL_CLOSED: 'FLEET_COLLECTOR_CHANNEL_CLOSED',
  /** The resident collector did not finish a poll's answer within the poll's deadline: the channel is closed. */
  COLLECTOR_TIMEOUT: 'FLEET_COLLECTOR_TIMEOUT',
  /** A resident answer grew past its size cap: the channel is closed. */
  COLLECTOR_TOO_LARGE: 'FLEET_COLLECTOR_TOO_LARGE',
  /** The resident loop refused a request line (a word outside its fixed shapes): nothing ran. */
  COLLECTOR_REFUSED: 'FLEET_COLLECTOR_REFUSED',
  /** The host is read by one exec a poll instead of the resident shell (the transport has no stdin, or it kept failing). */
  COLLECTOR_RESIDENT_OFF: 'FLEET_COLLECTOR_RESIDENT_OFF',
} as const;

export type FleetErrorCode = (typeof FleetErrorCode)[keyof typeof FleetErrorCode];

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    fleet: FleetErrorCode;
  }
}
