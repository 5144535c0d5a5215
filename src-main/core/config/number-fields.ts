// Whole-number config fields with their range in the message ("must be
// between 1 and 65535"), shared by the config's schemas.
import { z } from 'zod';

export function intRange(min: number, max: number) {
  const message = `must be between ${min} and ${max}`;
  return z
    .number()
    .int({ error: 'must be a whole number' })
    .min(min, { error: message })
    .max(max, { error: message });
}

export const PortSchema = intRange(1, 65535);
export const ListenPortSchema = intRange(0, 65535);
