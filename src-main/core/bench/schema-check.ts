// Structured output checked twice: does the answer parse as JSON, and does it
// validate against the scenario's JSON Schema (then the expected values, by
// JSON pointer). A schema that is not valid JSON Schema is refused up front.
import { Ajv, type ValidateFunction } from 'ajv';
import { AppError } from '../base/index.js';
import { BenchErrorCode } from './errors.js';

export interface SchemaCheck {
  jsonOk: boolean;
  schemaOk: boolean;
  /** First problem, in words (null when both passed). */
  error: string | null;
}

export interface CompiledSchema {
  check(text: string, expected?: Record<string, unknown>): SchemaCheck;
}

export function compileSchema(schema: Record<string, unknown>): CompiledSchema {
  const ajv = new Ajv({ allErrors: false, strict: false });
  let validate: ValidateFunction;
  try {
    if (!ajv.validateSchema(schema)) throw new Error(ajv.errorsText(ajv.errors, { dataVar: 'schema' }));
    validate = ajv.compile(schema);
  } catch (err) {
    throw new AppError(BenchErrorCode.INVALID_JSON_SCHEMA, `response_format schema is not valid JSON Schema: ${(err as Error).message}`, { cause: err });
  }
  return {
    check(text, expected) {
      let value: unknown;
      try {
        value = JSON.parse(stripFence(text));
      } catch (err) {
        return { jsonOk: false, schemaOk: false, error: `not JSON: ${(err as Error).message}` };
      }
      if (!validate(value)) return { jsonOk: true, schemaOk: false, error: ajv.errorsText(validate.errors) };
      for (const [pointer, want] of Object.entries(expected ?? {})) {
        const got = resolvePointer(value, pointer);
        if (JSON.stringify(got) !== JSON.stringify(want)) {
          return { jsonOk: true, schemaOk: false, error: `${pointer}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got) ?? 'nothing'}` };
        }
      }
      return { jsonOk: true, schemaOk: true, error: null };
    },
  };
}

/** Models sometimes wrap JSON in a ```json fence; that still counts as "parses" only when the rest is empty. */
function stripFence(text: string): string {
  const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return m ? m[1]! : text;
}

/** RFC 6901 JSON pointer. */
export function resolvePointer(value: unknown, pointer: string): unknown {
  if (pointer === '' || pointer === '/') return pointer === '' ? value : (value as Record<string, unknown> | null)?.[''];
  let cur: unknown = value;
  for (const raw of pointer.replace(/^\//, '').split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
