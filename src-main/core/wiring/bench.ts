// Builds the bench capability's services for the app and registers their
// lifetimes and events. Called once from app.ts.
import type { AppContext } from '../app-context.js';

export type BenchWiring = Record<string, never>;

export async function wireBench(_ctx: AppContext): Promise<BenchWiring> {
  return {};
}
