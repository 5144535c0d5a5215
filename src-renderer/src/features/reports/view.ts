// Registers the Reports view in the nav (see app/views.ts): after the
// Benchmarks, before the Audit log it draws on.
import type { ViewModule } from '../../app/view-module.js';
import { ReportsView } from './ReportsView.js';

export const view: ViewModule = { id: 'reports', label: 'Reports', glyph: '▤', order: 80, Component: ReportsView };
