// Stable codes of the gpu-console command itself (the codes of the console it
// talks to come back as they were answered). Scripts match on these.
export const CliErrorCode = {
  /** A command that needs a running console found none on the data dir. */
  NO_RUNNING_CONSOLE: 'CLI_NO_RUNNING_CONSOLE',
  /** The running console's bridge did not answer. */
  BRIDGE_UNREACHABLE: 'CLI_BRIDGE_UNREACHABLE',
  /** A read found no database in the data dir (none is created for it). */
  NO_DATABASE: 'CLI_NO_DATABASE',
  /** `serve` found no built UI to serve. */
  RENDERER_NOT_BUILT: 'CLI_RENDERER_NOT_BUILT',
  /** `serve --ui-port` could not listen on that port. */
  UI_PORT_UNAVAILABLE: 'CLI_UI_PORT_UNAVAILABLE',
  /** The running console has no proxy listening. */
  NO_PROXY: 'CLI_NO_PROXY',
  /** --config names another hosts file than the one the running console keeps its hosts in. */
  CONFIG_FILE_MISMATCH: 'CLI_CONFIG_FILE_MISMATCH',
} as const;
export type CliErrorCode = (typeof CliErrorCode)[keyof typeof CliErrorCode];

declare module '../core/base/index.js' {
  interface ErrorCodeRegistry {
    cli: CliErrorCode;
  }
}
