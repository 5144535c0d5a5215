// The report export now running (or last finished): the latest `report.progress`.
// Which export a page started is the page's business (features/reports/report-format.ts).
import type { StateCreator } from 'zustand/vanilla';
import type { ReportProgress } from '../../../src-preload/contract/index.js';

export interface ReportsSlice {
  reports: { progress: ReportProgress | null };
  applyReportProgress(progress: ReportProgress): void;
}

export const createReportsSlice: StateCreator<ReportsSlice, [], [], ReportsSlice> = (set) => ({
  reports: { progress: null },
  applyReportProgress: (progress) => set({ reports: { progress } }),
});
