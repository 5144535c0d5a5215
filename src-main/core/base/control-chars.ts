// Text that came from outside the console — a host's error or login question,
// a proposal's reason, a host name from an imported file, ssh's stderr — ends
// up on an operator's terminal. A terminal obeys the control characters in it:
// ESC sequences move the cursor, rewrite or hide lines, retitle the window,
// OSC 52 writes the clipboard; C1 codes (U+0080–U+009F) do the same on
// terminals that take 8-bit controls; bidi overrides reorder what is read. So
// such text is shown with those characters as visible escapes, never obeyed.

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- as above, minus the newline and tab the CLI writes itself
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function visible(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control character shown as an escape (`\x1b`, `\n`, `\u202e`): safe to print as one
 * line of a terminal. With `lines: true`, newlines and tabs are kept (for the CLI's own multi-line text);
 * a carriage return is still shown, since it lets a later line overwrite an earlier one.
 */
export function escapeControls(text: string, options: { lines?: boolean } = {}): string {
  return text.replace(options.lines ? CONTROL_BUT_LINES : CONTROL, visible);
}

// JSON.stringify leaves these raw (C0 it escapes itself).
const JSON_RAW_CONTROL = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A JSON text with the control characters JSON.stringify leaves raw (DEL, C1, bidi and line separators)
 * written as `\uXXXX` escapes: the same JSON value, nothing a terminal obeys. They can stand only inside
 * strings, where the escape means the same character.
 */
export function escapeJsonControls(json: string): string {
  return json.replace(JSON_RAW_CONTROL, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
