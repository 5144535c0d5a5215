import type { ViewModule } from '../../app/view-module.js';
import { AlertsView } from './AlertsView.js';

export const view: ViewModule = { id: 'alerts', label: 'Alerts', glyph: '⚑', order: 25, Component: AlertsView };
