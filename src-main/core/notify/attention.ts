// How the tray and badges say what needs the operator.
export interface AttentionCounts {
  pendingApprovals: number;
  activeAlerts: number;
}

export function attentionLabel(c: AttentionCounts): string {
  if (c.pendingApprovals === 0 && c.activeAlerts === 0) return 'GPU Console — nothing needs you';
  const parts = [];
  if (c.pendingApprovals) parts.push(`${c.pendingApprovals} approval${c.pendingApprovals === 1 ? '' : 's'} waiting`);
  if (c.activeAlerts) parts.push(`${c.activeAlerts} active alert${c.activeAlerts === 1 ? '' : 's'}`);
  return `GPU Console — ${parts.join(', ')}`;
}

