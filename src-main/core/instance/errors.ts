// Stable codes of the instance capability: the data folder and the ready file
// one console writes for the others (the CLI) to find it.
export const InstanceErrorCode = {
  /** The ready file is not JSON, does not describe a running console, or has no token in its ui URL. */
  READY_FILE_INVALID: 'INSTANCE_READY_FILE_INVALID',
  /** The data folder cannot be created or made private to this user. */
  DATA_DIR_UNUSABLE: 'INSTANCE_DATA_DIR_UNUSABLE',
} as const;
export type InstanceErrorCode = (typeof InstanceErrorCode)[keyof typeof InstanceErrorCode];

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    instance: InstanceErrorCode;
  }
}
