// The silence dialog's choices turned into the contract's input, or the
// reason it cannot be sent yet. Pure, so the rules are tested without a DOM;
// the contract's own schema is the last word (the core parses it again).
import { SilenceInputSchema, type Alert, type ChannelInput } from '../../../../src-preload/contract/index.js';

export type ScopeChoice = 'host' | 'service' | 'model';

export const DURATIONS = [
  { value: '1h', label: '1 h', ms: 3_600_000 },
  { value: '2h', label: '2 h', ms: 2 * 3_600_000 },
  { value: '4h', label: '4 h', ms: 4 * 3_600_000 },
  { value: '8h', label: '8 h', ms: 8 * 3_600_000 },
  { value: '24h', label: '24 h', ms: 24 * 3_600_000 },
  { value: 'custom', label: 'custom', ms: null },
] as const;

export interface SilenceChoices {
  alert: Pick<Alert, 'host' | 'serviceId' | 'model'>;
  rule: string;
  scope: ScopeChoice;
  /** One of DURATIONS' values. */
  duration: string;
  customMinutes: string;
  reason: string;
}

export type SilenceRequest = { ok: true; input: ChannelInput<'alerts.silence'> } | { ok: false; problem: string | null };

export function silenceRequest(c: SilenceChoices): SilenceRequest {
  const preset = DURATIONS.find((d) => d.value === c.duration);
  const forMs = preset?.ms ?? Math.round(Number(c.customMinutes) * 60_000);
  const scope =
    c.scope === 'service' && c.alert.serviceId !== null
      ? { host: c.alert.host, serviceId: c.alert.serviceId }
      : c.scope === 'model' && c.alert.model !== null
        ? { model: c.alert.model }
        : { host: c.alert.host };
  const parsed = SilenceInputSchema.safeParse({ rule: c.rule, ...scope, forMs, reason: c.reason });
  if (parsed.success) return { ok: true, input: parsed.data };
  // An empty reason is the form's starting state, not a mistake to point at yet.
  if (c.reason.trim() === '') return { ok: false, problem: null };
  return { ok: false, problem: parsed.error.issues.map((i) => i.message).join('; ') };
}
