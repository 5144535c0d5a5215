import type { ViewModule } from '../../app/view-module.js';
import { LogsView } from './LogsView.js';

export const view: ViewModule = { id: 'logs', label: 'Logs', glyph: '≡', order: 45, Component: LogsView };
