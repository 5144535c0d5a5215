import { z } from 'zod';

// Secrets go in, never out: the UI and CLI can store, list (names only) and
// delete them; no channel returns a value.
const SecretName = z.string().regex(/^[a-z][a-z0-9._-]{0,127}$/i, { error: 'a secret name is 1–128 letters, digits, dots, dashes or underscores' });

export const SecretsStatusSchema = z
  .object({ kind: z.string(), persistent: z.boolean(), names: z.array(z.string()) })
  .strict();

export const secretsInvokeChannels = {
  'secrets.list': { input: z.object({}).strict(), output: SecretsStatusSchema },
  'secrets.set': {
    input: z.object({ name: SecretName, value: z.string().min(1).max(8192) }).strict(),
    output: z.object({ name: z.string(), persisted: z.boolean(), message: z.string() }).strict(),
  },
  'secrets.delete': { input: z.object({ name: SecretName }).strict(), output: z.object({ name: z.string() }).strict() },
} as const;

export const secretsEventChannels = {} as const;
