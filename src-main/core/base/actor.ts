import { userInfo } from 'node:os';

// Who did it, for audit rows: the OS user who runs the console, and the bridge
// the call came through (`operator:alice@web`, `operator:alice@cli`).

export type Caller = 'ipc' | 'web' | 'cli' | 'test';

export function operatorActor(caller: string): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (containers): keep "unknown" rather than failing the call.
  }
  return `operator:${user}@${caller}`;
}
