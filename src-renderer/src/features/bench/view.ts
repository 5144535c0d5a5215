// Registers the Benchmarks view in the nav (see app/views.ts).
import type { ViewModule } from '../../app/views.js';
import { BenchView } from './BenchView.js';

export const view: ViewModule = { id: 'bench', label: 'Benchmarks', glyph: '≋', order: 40, Component: BenchView };
