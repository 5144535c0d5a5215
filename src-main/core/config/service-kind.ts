import { z } from 'zod';
import { ServiceKindSchema, type ServiceKind } from '../../../src-preload/contract/service-kind.js';

// What a service's `kind` allows beyond the common fields: where its health is
// read (`healthPath`, for the kinds without a fixed one) and which lifecycle
// drivers can act on it. A driver written for another kind of server would
// send it calls it does not answer, so the config check refuses the pair.

export { ServiceKindSchema };

/** The kinds whose health is read at a path the operator may set; the others read their engine's own. */
const HEALTH_PATH_KINDS: readonly ServiceKind[] = ['sglang', 'tei', 'openai'];

/** GET path a service's health is read at when `healthPath` is not given. */
export const DEFAULT_HEALTH_PATH: Record<ServiceKind, string> = {
  vllm: '/health',
  'llama-server': '/health',
  sglang: '/health',
  tei: '/health',
  // Any OpenAI-compatible server answers its model list; few have a /health.
  openai: '/v1/models',
};

export const HealthPathSchema = z
  .string()
  .max(256, { error: 'healthPath must be at most 256 characters' })
  .regex(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*(\?[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*)?$/, {
    error: 'healthPath must be a path on the server starting with "/" (letters, digits and URL punctuation; no spaces or scheme)',
  });

/** Lifecycle drivers that act on one kind of server only; the others (ssh-command, router) act on any. */
const DRIVER_KINDS: Readonly<Record<string, readonly ServiceKind[]>> = {
  'vllm-sleep': ['vllm'],
  'llama-server': ['llama-server'],
  'llama-router': ['llama-server'],
};

/** Where the service's health is read: its `healthPath`, else its kind's default. */
export function healthPathOf(service: { kind: ServiceKind; healthPath?: string | undefined }): string {
  return service.healthPath ?? DEFAULT_HEALTH_PATH[service.kind];
}

/** The config issues of a service's kind-specific fields (path relative to the service). */
export function serviceKindIssues(service: { kind: ServiceKind; healthPath?: string | undefined; lifecycle?: { driver?: string | undefined } | undefined }): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  if (service.healthPath !== undefined && !HEALTH_PATH_KINDS.includes(service.kind)) {
    out.push({ path: ['healthPath'], message: `healthPath applies to kind ${HEALTH_PATH_KINDS.join(', ')}; a ${service.kind} service's health is read at ${DEFAULT_HEALTH_PATH[service.kind]}` });
  }
  const driver = service.lifecycle?.driver;
  const kinds = driver === undefined ? undefined : DRIVER_KINDS[driver];
  if (driver !== undefined && kinds !== undefined && !kinds.includes(service.kind)) {
    out.push({
      path: ['lifecycle', 'driver'],
      message: `the ${driver} driver acts on ${kinds.join(' or ')} servers; this service is kind ${service.kind} (use ssh-command to restart it by its command, systemd unit or compose service)`,
    });
  }
  return out;
}
