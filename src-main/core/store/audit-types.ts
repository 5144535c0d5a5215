// Every audit event type the console writes, grouped by the capability that
// writes it. AuditLog.append takes only these, so a new event is declared here
// (where the report, the docs and a reviewer find it) before it can be written.
// Types are dotted lower-case names (the log refuses anything else at run time).
// The UI shows them as text and filters by none: they live in core, not in the
// contract.

export const AUDIT_EVENT_TYPES = [
  // instance: one console process starting and stopping
  'console.started',
  'console.stopped',
  // config: the hosts file reloaded
  'config.reloaded',
  'config.reload.failed',
  // fleet: sessions, trust decisions, the operator's host commands
  'host.connect',
  'host.disconnect',
  'host.reconnect',
  'host.connection.lost',
  'host.connection.up',
  'host.rebooted',
  'hosts.import.previewed',
  'hosts.imported',
  'ssh.hostkey.unknown',
  'ssh.hostkey.changed',
  'ssh.hostkey.revoked',
  'ssh.hostkey.trusted',
  'ssh.hostkey.trust.rejected',
  'ssh.hostkey.refused',
  'ssh.hostkey.forgotten',
  'ssh.key.unlocked',
  'ssh.prompt.answered',
  'ssh.prompt.declined',
  'tunnel.test',
  // proxy: client tokens, admission caps, drains
  'proxy.token.created',
  'proxy.token.revoked',
  // a token's class or limits changed (fields old → new), and a budget threshold crossed this month
  'proxy.token.changed',
  'proxy.token.budget',
  'proxy.caps.changed',
  'proxy.drain.started',
  'proxy.drain.finished',
  'proxy.drain.resumed',
  // proxy: captured request bodies opened or exported (who, which capture)
  'proxy.capture.viewed',
  'proxy.capture.exported',
  // lifecycle: one line per action state (ActionState), its steps, standing approvals
  'lifecycle.proposed',
  'lifecycle.approved',
  'lifecycle.rejected',
  'lifecycle.withdrawn',
  'lifecycle.expired',
  'lifecycle.running',
  'lifecycle.drained',
  'lifecycle.step',
  'lifecycle.verified',
  'lifecycle.failed',
  'lifecycle.interrupted',
  'lifecycle.checked',
  'lifecycle.resumed',
  'lifecycle.standing.granted',
  'lifecycle.standing.revoked',
  'lifecycle.standing.used',
  // telemetry and alerts
  'alert.raised',
  'alert.changed',
  'alert.cleared',
  'alerts.baseline.set',
  'alert.acknowledged',
  'alerts.silence.set',
  'alerts.silence.ended',
  'alerts.silence.expired',
  // the parallelism advisor: a person turned a recommendation into a caps change, or rejected it
  'advisor.applied',
  'advisor.rejected',
  // bench: a run's start and its end state (RunState, less 'running')
  'bench.run.started',
  'bench.run.completed',
  'bench.run.cancelled',
  'bench.run.failed',
  'bench.run.imported',
  'bench.run.deleted',
  // report
  'report.exported',
  'report.export.failed',
  'report.gate.marked',
  // notify
  'notifications.channel.added',
  'notifications.channel.updated',
  'notifications.channel.removed',
  'notifications.channel.secret-rebound',
  'notifications.channel.test',
  'notifications.dnd',
  // secrets, budget
  'secret.set',
  'secret.deleted',
  'budget.set',
  'budget.threshold',
  // store: writes to the data folder came back after a full disk or an I/O error (the episode: since when, what was dropped)
  'store.storage.recovered',
] as const;

export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];
