// What a feature's `view.ts` exports to appear in the nav (app/views.ts finds
// them). A leaf: features import this, never views.ts, which imports them.
import type { ComponentType } from 'react';

export interface ViewModule {
  /** Unique id; also the nav test id (`nav-<id>`). */
  id: string;
  label: string;
  /** One character shown before the label. */
  glyph: string;
  /** Position in the nav: fleet 10, hosts 20, proxy 30, audit 90. */
  order: number;
  Component: ComponentType;
}
