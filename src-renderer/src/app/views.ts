// Views beyond the core ones register themselves: a feature folder with a
// `view.ts` exporting `view: ViewModule` appears in the nav and the main area,
// with no edit to the app shell (Vite's import.meta.glob finds them at build).
import type { ViewModule } from './view-module.js';

const modules = import.meta.glob<{ view: ViewModule }>('../features/*/view.ts', { eager: true });

export const PLUGGED_VIEWS: readonly ViewModule[] = Object.values(modules)
  .map((m) => m.view)
  .sort((a, b) => a.order - b.order);
