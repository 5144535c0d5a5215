// Prompt sources: built-in synthetic prompts of a given input length, or a
// JSONL file (or the same text inline) with one chat per line. A broken line
// is reported with its number.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { PromptSource } from '../../../src-preload/contract/index.js';
import { AppError } from '../base/index.js';
import { BenchErrorCode } from './errors.js';

export interface ChatMessage {
  role: string;
  content: unknown;
}

export interface BenchPrompt {
  messages: ChatMessage[];
  /** Expected values by JSON pointer for this prompt (overrides the scenario's). */
  expected?: Record<string, unknown>;
}

const MessageSchema = z.looseObject({ role: z.string().min(1), content: z.unknown() });
const LineSchema = z.union([
  z.array(MessageSchema).min(1),
  z.looseObject({ messages: z.array(MessageSchema).min(1), expected: z.record(z.string(), z.unknown()).optional() }),
]);

const WORDS = 'report the state of each service and its queue in one short JSON object with fields status latency and notes'.split(' ');

/** `count` distinct prompts of about `inputTokens` tokens (one word ≈ one token; distinct so no prefix cache hits across prompts). */
export function syntheticPrompts(inputTokens: number, count: number): BenchPrompt[] {
  return Array.from({ length: count }, (_, i) => {
    const words: string[] = [`#${i}`];
    for (let w = 1; w < inputTokens; w++) words.push(WORDS[(w * 7 + i) % WORDS.length]!);
    return { messages: [{ role: 'user', content: words.join(' ') }] };
  });
}

export function parseJsonl(text: string, file: string): BenchPrompt[] {
  const prompts: BenchPrompt[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('//')) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new AppError(BenchErrorCode.PROMPT_FILE_INVALID, `${file}:${i + 1}: not JSON (${(err as Error).message})`, {
        details: { file, line: i + 1 },
      });
    }
    const parsed = LineSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new AppError(
        BenchErrorCode.PROMPT_FILE_INVALID,
        `${file}:${i + 1}: expected an array of {role, content} messages or {"messages": […]}${issue ? ` (${issue.path.join('.') || 'line'}: ${issue.message})` : ''}`,
        { details: { file, line: i + 1 } },
      );
    }
    const v = parsed.data;
    prompts.push(Array.isArray(v) ? { messages: v as ChatMessage[] } : { messages: v.messages as ChatMessage[], expected: v.expected });
  });
  if (prompts.length === 0) throw new AppError(BenchErrorCode.PROMPT_FILE_INVALID, `${file}: no prompts (empty file)`, { details: { file } });
  return prompts;
}

/**
 * Distinct synthetic prompts are bounded in total size (about 2 M words): long prompts are fewer and
 * reused in turn, so a 200k-token scenario costs tens of megabytes, not gigabytes, and the event loop
 * is not held for seconds while they are built.
 */
const SYNTHETIC_WORD_BUDGET = 2_000_000;

export async function loadPrompts(source: PromptSource, countHint: number): Promise<BenchPrompt[]> {
  if (source.kind === 'synthetic') {
    const byBudget = Math.max(1, Math.floor(SYNTHETIC_WORD_BUDGET / source.inputTokens));
    return syntheticPrompts(source.inputTokens, Math.max(1, Math.min(countHint, 512, byBudget)));
  }
  if (source.kind === 'inline') return parseJsonl(source.text, source.filename ?? 'inline JSONL');
  let text: string;
  try {
    text = await readFile(source.file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new AppError(BenchErrorCode.PROMPT_FILE_MISSING, `prompt file ${source.file} cannot be read${code ? ` (${code})` : ''}`, {
      details: { file: source.file },
      cause: err,
    });
  }
  return parseJsonl(text, source.file);
}
