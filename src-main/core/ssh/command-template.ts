import { AppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { shellQuote } from './shell-quote.js';

// Remote commands come from templates such as
//   `systemctl --user restart {unit}` or `docker restart {container}`
// where every `{name}` is replaced by ONE shell-quoted argument. Values from
// config or the UI can therefore never add words, pipes or substitutions.
// `{{` and `}}` stand for literal braces.

const PLACEHOLDER = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|[{}]/g;

/** Names used by a template, in order of first use; throws SSH_TEMPLATE_INVALID on a stray brace. */
export function templateParameters(template: string): string[] {
  const names: string[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (m[0] === '{{' || m[0] === '}}') continue;
    if (!m[1]) {
      throw new AppError(SshErrorCode.TEMPLATE_INVALID, `command template has a stray "${m[0]}" at ${m.index}: ${template}`, {
        details: { template, at: m.index },
      });
    }
    if (!names.includes(m[1])) names.push(m[1]);
  }
  return names;
}

/** Fills a template; every parameter must be given, and no extra ones (a typo would silently do nothing). */
export function renderCommand(template: string, args: Readonly<Record<string, string | number>>): string {
  const names = templateParameters(template);
  const missing = names.filter((n) => !(n in args));
  const extra = Object.keys(args).filter((n) => !names.includes(n));
  if (missing.length > 0 || extra.length > 0) {
    throw new AppError(
      SshErrorCode.TEMPLATE_INVALID,
      `command template ${JSON.stringify(template)}: ${missing.length ? `missing ${missing.join(', ')}` : ''}${missing.length && extra.length ? '; ' : ''}${extra.length ? `unknown ${extra.join(', ')}` : ''}`,
      { details: { template, missing, extra } },
    );
  }
  return template.replace(PLACEHOLDER, (whole: string, name: string | undefined) => {
    if (whole === '{{') return '{';
    if (whole === '}}') return '}';
    return shellQuote(String(args[name!]));
  });
}
