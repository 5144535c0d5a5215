import type { AppSlice } from './app-slice.js';
import type { FleetSlice } from './fleet-slice.js';
import type { UiSlice } from './ui-slice.js';
import type { ProxySlice } from './proxy-slice.js';

export type RootState = AppSlice & FleetSlice & UiSlice & ProxySlice;
