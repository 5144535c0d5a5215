import { z } from 'zod';

// The contract's shared vocabulary: every schema that names the same thing
// derives from these, so a rule (length, allowed characters) lives once.

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;

/** A name an operator reads and the audit log records: 1–max characters, no control characters. */
export function printable(max: number) {
  return z.string().min(1).max(max).regex(NO_CONTROL, { error: 'must not hold control characters' });
}

/** A host label (as in the inventory). */
export const HostLabelSchema = printable(64);
/** A service id within a host. */
export const ServiceIdSchema = printable(64);
/** A served model name or alias. */
export const ModelNameSchema = printable(200);
export const EmptyInputSchema = z.object({}).strict();
