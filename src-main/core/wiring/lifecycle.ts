// Builds the lifecycle capability's services for the app and registers their
// lifetimes and events. Called once from app.ts.
import type { AppContext } from '../app-context.js';

export type LifecycleWiring = Record<string, never>;

export async function wireLifecycle(_ctx: AppContext): Promise<LifecycleWiring> {
  return {};
}
