// Stable codes of the parallelism advisor. The renderer and the CLI match these,
// never a message; each message names the cause and the fix.

// The codes live in the contract (the renderer matches them); re-exported here as the capability's own.
import { AdvisorErrorCode } from '../../../src-preload/contract/index.js';
export { AdvisorErrorCode };

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    advisor: AdvisorErrorCode;
  }
}
