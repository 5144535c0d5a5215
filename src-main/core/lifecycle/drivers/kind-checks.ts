import { z } from 'zod';
import { toAppError } from '../../base/index.js';
import { chatProbeCheck, errorText } from './llama-checks.js';
import type { CheckOutcome, DriverCheck, LifecycleTargetConfig } from './types.js';

// What a restart of a server without a driver of its own (SGLang, TEI, any
// OpenAI-compatible server) is verified by: its health path answering 2xx,
// then one request of what it serves (a 1-token chat, or one embedding for TEI).

const EmbeddingSchema = z.object({ data: z.array(z.object({ embedding: z.array(z.number()) })).min(1) });

export function kindHealthCheck(target: LifecycleTargetConfig): DriverCheck {
  const path = target.healthPath ?? '/health';
  return {
    name: 'health',
    text: `GET ${path} answers 2xx`,
    async run(io, t): Promise<CheckOutcome> {
      try {
        const r = await io.http('GET', { path }, null, t.timeoutMs);
        return { ok: r.status >= 200 && r.status < 300, line: `health: GET ${path} HTTP ${r.status}` };
      } catch (err) {
        return { ok: false, line: `health: no answer from GET ${path} (${toAppError(err).message})` };
      }
    },
  };
}

export function embeddingProbeCheck(model: string, after: readonly string[]): DriverCheck {
  return {
    name: 'probe',
    text: 'one embedding answers (POST /v1/embeddings)',
    after,
    notAttempted: `probe: not attempted (${after.join(' and ')} did not hold in time)`,
    async run(io, t): Promise<CheckOutcome> {
      try {
        const r = await io.http('POST', { path: '/v1/embeddings' }, JSON.stringify({ model, input: 'probe' }), t.timeoutMs);
        if (r.status !== 200) return { ok: false, line: `probe: HTTP ${r.status} ${errorText(r.text)}` };
        let body: unknown;
        try {
          body = JSON.parse(r.text) as unknown;
        } catch {
          body = undefined;
        }
        const e = EmbeddingSchema.safeParse(body);
        if (!e.success) return { ok: false, line: 'probe: HTTP 200 without a usable vector' };
        return { ok: true, line: `probe: embedding of ${e.data.data[0]!.embedding.length} dimensions` };
      } catch (err) {
        return { ok: false, line: `probe: ${toAppError(err).message}` };
      }
    },
  };
}

/** The checks after a restart of a server of a kind without its own driver. */
export function kindRestartChecks(target: LifecycleTargetConfig): DriverCheck[] {
  const probe = target.kind === 'tei' ? embeddingProbeCheck(target.model, ['health']) : chatProbeCheck(target.model, ['health']);
  return [kindHealthCheck(target), probe];
}
