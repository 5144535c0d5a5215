// Stable error codes of the config capability. CONFIG_INVALID carries
// details { file, issues: [{ path, line, column, message }] }.

export const ConfigErrorCode = {
  /** The file does not exist. */
  NOT_FOUND: 'CONFIG_NOT_FOUND',
  /** The file exists but cannot be read (permissions, a folder, I/O error). */
  UNREADABLE: 'CONFIG_UNREADABLE',
  /** YAML syntax, schema or cross-field (duplicates) errors; details list every issue. */
  INVALID: 'CONFIG_INVALID',
  /** The console runs the built-in demo fleet: there is no config file to reload. */
  DEMO_MODE: 'CONFIG_DEMO_MODE',
} as const;

export type ConfigErrorCode = (typeof ConfigErrorCode)[keyof typeof ConfigErrorCode];

export interface ConfigIssue {
  /** Field path as written by people: `hosts[0].ssh.port`; '' for the document itself. */
  path: string;
  /** 1-based; 0 when the issue has no place in a file (an in-memory config). */
  line: number;
  /** 1-based; 0 when unknown. */
  column: number;
  message: string;
}

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    config: ConfigErrorCode;
  }
}
