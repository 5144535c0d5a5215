// Restart commands built from what operators already run: a systemd unit
// (`sudo -n systemctl restart llama-server.service`) or a compose service
// (`docker compose -f … -p … restart llama`). Every value is one shell-quoted
// word (config validated it already); `sudo -n` because no one can type a
// password into an SSH exec: a sudo that wants one fails at once, naming it.
import type { LifecycleConfig } from '../config/index.js';
import { shellJoin } from '../ssh/index.js';
import type { RestartSource } from './drivers/index.js';

/** Braces in a generated command are literal: doubled, so the template renderer leaves them. */
const literal = (command: string) => command.replace(/[{}]/g, (b) => b + b);

/** The restart template the lifecycle block describes (systemdUnit or compose); null when it names neither. */
export function restartFromConfig(lc: LifecycleConfig | undefined): { template: string; source: RestartSource } | null {
  if (!lc) return null;
  if (lc.systemdUnit !== undefined) {
    const user = lc.systemdUser === true;
    const sudo = lc.useSudo ?? !user;
    const argv = [...(sudo ? ['sudo', '-n'] : []), 'systemctl', ...(user ? ['--user'] : []), 'restart', lc.systemdUnit];
    return { template: literal(shellJoin(argv)), source: 'systemd' };
  }
  if (lc.compose !== undefined) {
    const c = lc.compose;
    const argv = [
      ...(lc.useSudo === true ? ['sudo', '-n'] : []),
      'docker',
      'compose',
      ...(c.file !== undefined ? ['-f', c.file] : []),
      ...(c.project !== undefined ? ['-p', c.project] : []),
      'restart',
      c.service,
    ];
    return { template: literal(shellJoin(argv)), source: 'compose' };
  }
  return null;
}

/** The restart command of a service: an explicit restartCommand wins (lifecycle's, then the service's), else the generated one. */
export function restartOf(serviceRestartCommand: string | undefined, lc: LifecycleConfig | undefined): { template: string | null; source: RestartSource | null } {
  const explicit = lc?.restartCommand ?? serviceRestartCommand;
  if (explicit !== undefined) return { template: explicit, source: 'restartCommand' };
  const generated = restartFromConfig(lc);
  return generated ? { template: generated.template, source: generated.source } : { template: null, source: null };
}
