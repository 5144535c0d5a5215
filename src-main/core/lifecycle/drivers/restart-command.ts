import { AppError, toAppError } from '../../base/index.js';
import { renderCommand, templateParameters } from '../../ssh/index.js';
import { LifecycleErrorCode } from '../errors.js';
import type { DriverStep, LifecycleTargetConfig } from './types.js';

/**
 * The restart command from its template. Parameters a template may use:
 * {service}, {model}, {host}, {port}; each is filled as ONE shell-quoted word.
 * Anything else is a template with missing parameters: a coded error, never a
 * command with a hole in it.
 */
export function restartStep(target: LifecycleTargetConfig): DriverStep {
  const template = target.restartCommand;
  if (!template) {
    throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, `${target.upstream} has no restartCommand in config; restart is not available`, {
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
