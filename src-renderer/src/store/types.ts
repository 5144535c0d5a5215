// The whole store's state: the slices side by side. Each slice declares its own
// part and never imports this file back (no cycle through the store's types).
import type { ActionsSlice } from './actions-slice.js';
import type { AppSlice } from './app-slice.js';
import type { BenchSlice } from './bench-slice.js';
import type { FleetSlice } from './fleet-slice.js';
import type { NotificationsSlice } from './notifications-slice.js';
import type { ProxySlice } from './proxy-slice.js';
import type { ReportsSlice } from './reports-slice.js';
import type { UiSlice } from './ui-slice.js';

export type RootState = AppSlice & FleetSlice & UiSlice & ProxySlice & ActionsSlice & BenchSlice & ReportsSlice & NotificationsSlice;
