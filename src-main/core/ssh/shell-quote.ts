/**
 * Quotes one argument for a POSIX shell: wrapped in single quotes, each embedded
 * single quote written as '\'' . Nothing inside single quotes is special to sh,
 * so `$()`, backticks, `;`, newlines and globs all stay literal.
 */
export function shellQuote(arg: string): string {
  if (arg.includes('\0')) throw new TypeError('shellQuote: NUL bytes cannot be passed to a shell');
  if (arg !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return "'" + arg.replace(/'/g, `'\\''`) + "'";
}

/** Quotes each argument and joins them with spaces. */
export function shellJoin(args: readonly string[]): string {
  return args.map(shellQuote).join(' ');
}
