// Registers the Notifications view in the nav (app/views.ts finds it): after
// Reports, before the Audit log where its changes are recorded.
import type { ViewModule } from '../../app/view-module.js';
import { NotifyView } from './NotifyView.js';

export const view: ViewModule = { id: 'notifications', label: 'Notifications', glyph: '✉', order: 85, Component: NotifyView };
