// Builds the proxy capability's services for the app and registers their
// lifetimes and events. Called once from app.ts.
import type { AppContext } from '../app-context.js';

export interface ProxyWiring {
  /** Base URL of the local OpenAI-compatible endpoint, or null while the proxy is not running. */
  url(): string | null;
}

export async function wireProxy(_ctx: AppContext): Promise<ProxyWiring> {
  return { url: () => null };
}
