import { AppError, toAppError } from '../../base/index.js';
import { renderCommand, templateParameters } from '../../ssh/index.js';
import { LifecycleErrorCode } from '../errors.js';
import type { DriverStep, LifecycleTargetConfig } from './types.js';

/** Why restart is not offered for `target`; null when a restart command is configured. */
export function restartUnavailable(target: LifecycleTargetConfig): string | null {
  if (target.restartCommand !== null) return null;
  return `no restart command for ${target.upstream}: name its systemd unit (lifecycle.systemdUnit, e.g. llama-server.service) or its compose service (lifecycle.compose.service), or write lifecycle.restartCommand`;
}

/**
 * The restart command from its template. Parameters a template may use:
 * {service}, {model}, {host}, {port}; each is filled as ONE shell-quoted word.
 * Anything else is a template with missing parameters: a coded error, never a
 * command with a hole in it.
 */
export function restartStep(target: LifecycleTargetConfig): DriverStep {
  const template = target.restartCommand;
  if (!template) {
    throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, restartUnavailable(target) ?? `${target.upstream} has no restart command`, {
      details: { upstream: target.upstream, kind: 'restart' },
    });
  }
  const available: Record<string, string | number> = { service: target.serviceId, model: target.model, host: target.label, port: target.remotePort };
  try {
    const names = templateParameters(template);
    const missing = names.filter((n) => !(n in available));
    if (missing.length > 0) {
      throw new AppError(LifecycleErrorCode.TEMPLATE_INVALID, `restart template of ${target.upstream} needs ${missing.map((m) => `{${m}}`).join(', ')}, which the console cannot fill (known: {service}, {model}, {host}, {port})`, {
        details: { template, missing },
      });
    }
    const args = Object.fromEntries(names.map((n) => [n, available[n]!]));
    return { kind: 'ssh', command: renderCommand(template, args) };
  } catch (err) {
    const e = toAppError(err);
    if (e.code === LifecycleErrorCode.TEMPLATE_INVALID) throw e;
    throw new AppError(LifecycleErrorCode.TEMPLATE_INVALID, `restart template of ${target.upstream}: ${e.message}`, { details: { template }, cause: err });
  }
}

/**
 * What to tell the operator when a restart command failed for a reason the
 * console recognises (sudo wanting a password it cannot type); null otherwise.
 */
export function restartFailureHint(target: LifecycleTargetConfig, output: string): string | null {
  if (/sudo: (a password is required|a terminal is required|no tty present)/i.test(output)) {
    const alt = target.restartSource === 'systemd' || target.restartSource === 'compose' ? ', or set lifecycle.useSudo: false if the SSH user may restart it without root' : '';
    return `sudo wants a password, which the console never types: allow the SSH user to run exactly this command without one (a sudoers NOPASSWD rule for it)${alt}`;
  }
  if (/Interactive authentication required|Access denied/i.test(output) && /systemctl/.test(target.restartCommand ?? '')) {
    return 'systemd refused the SSH user: restart with sudo (lifecycle.useSudo: true) or allow the user through a polkit rule for this unit';
  }
  if (/permission denied.*docker.*sock/i.test(output)) {
    return 'the SSH user may not use docker: add it to the docker group, or set lifecycle.useSudo: true';
  }
  return null;
}
