// Builds the ssh capability's services for the app and registers their
// lifetimes and events. Called once from app.ts.
import type { AppContext } from '../app-context.js';

export type SshWiring = Record<string, never>;

export async function wireSsh(_ctx: AppContext): Promise<SshWiring> {
  return {};
}
