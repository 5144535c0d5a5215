// Registers the Playground view in the nav (app/views.ts finds it).
import type { ViewModule } from '../../app/view-module.js';
import { PlaygroundView } from './PlaygroundView.js';

export const view: ViewModule = { id: 'playground', label: 'Playground', glyph: '▷', order: 35, Component: PlaygroundView };
