import type { z } from 'zod';

// The two helpers used at every boundary: strict (reject on any mismatch) and
// lenient (report and drop). Both turn zod issues into one readable line.

export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}

export function parseStrict<S extends z.ZodType>(
  schema: S,
  value: unknown,
): { ok: true; data: z.output<S> } | { ok: false; message: string; issues: z.core.$ZodIssue[] } {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, data: result.data };
  return { ok: false, message: describeIssues(result.error), issues: result.error.issues };
}

export function parseLenient<S extends z.ZodType>(schema: S, value: unknown, onError: (message: string) => void): z.output<S> | null {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  onError(describeIssues(result.error));
  return null;
}
