// Whether a short completion looks like a model that has its weights: the
// level-2-woken-without-reload case (vllm#29341) prints tokenizer debris —
// byte-BPE markers, replacement characters, runs of punctuation — and no words.

const DEBRIS = /[\u0120\u010A\u0109\u2581\uFFFD\uA66E]|<0x[0-9A-Fa-f]{2}>|([!%?¿])\1/u;

export function looksLikeGibberish(text: string): boolean {
  const t = text.trim();
  if (t.length === 0) return true;
  if (DEBRIS.test(t) && !/\p{Ll}{3,} \p{Ll}{2,}/u.test(t)) return true;
  const letters = [...t].filter((c) => /[\p{L}\p{N}\s.,;:'"-]/u.test(c)).length;
  return t.length >= 4 && letters / [...t].length < 0.5;
}
