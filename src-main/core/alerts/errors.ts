// Stable codes of the alerts capability. The renderer and the CLI match these,
// never a message; each message names the cause and the fix.

// The codes live in the contract (the renderer matches them); re-exported here as the capability's own.
import { AlertsErrorCode } from '../../../src-preload/contract/index.js';
export { AlertsErrorCode };

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    alerts: AlertsErrorCode;
  }
}
