import type { ViewModule } from '../../app/view-module.js';
import { ActionsView } from './ActionsView.js';

export const view: ViewModule = { id: 'actions', label: 'Actions', glyph: '↻', order: 40, Component: ActionsView };
