// Registers the Benchmarks view in the nav (app/views.ts finds it).
import type { ViewModule } from '../../app/view-module.js';
import { BenchView } from './BenchView.js';

export const view: ViewModule = { id: 'bench', label: 'Benchmarks', glyph: '≋', order: 40, Component: BenchView };
