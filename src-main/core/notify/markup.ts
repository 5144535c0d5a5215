// A notice's title and body carry text from outside the console: a host's
// error, a proposal's reason, host and model names. In a chat channel that
// text must read as text: `<!channel>` must not page a whole Slack workspace,
// `@**all**` a whole Zulip organisation, and `[docs](https://evil)` must not
// show one link and open another. Each function here makes outside text inert
// in one channel's markup; the console's own fixed wording around it (a bold
// title, the severity) is written by shapes.ts and may use markup.
import { escapeControls } from '../base/index.js';

/** Invisible, so the text reads the same, but it stands between the characters a markup construct needs side by side. */
const ZWSP = '\u200b';
const WORD_JOINER = '\u2060';

/**
 * Slack mrkdwn: `&`, `<` and `>` are the three characters Slack asks senders to escape; with `<` gone no
 * `<!channel>`, `<!here>`, `<@U…>`, `<#C…>` or `<url|text>` can form. A plain `@channel` / `@here` /
 * `@everyone` is broken too, for workspaces whose apps parse names. Control and bidi characters are shown as escapes.
 */
export function slackText(outside: string): string {
  return escapeControls(outside, { lines: true })
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/@(channel|here|everyone)\b/gi, `@${WORD_JOINER}$1`);
}

/**
 * Zulip markdown (its own dialect: backslash escapes are switched off, so a `\*` would show, not escape).
 * Each construct that reaches people or hides a target is broken with a zero-width space: mentions
 * (`@**all**`, `@*group*`, silent `@_**name**`), stream and topic links (`#**stream>topic**`), links and
 * images (`[text](url)`), and fences of three or more backticks or tildes (code, quote, spoiler, math
 * blocks that would swallow or restyle what follows). Bold and italic stay possible: they hide nothing.
 */
export function zulipText(outside: string): string {
  return escapeControls(outside, { lines: true })
    .replace(/@(?=[*_])/g, `@${ZWSP}`)
    .replace(/#(?=\*\*)/g, `#${ZWSP}`)
    .replace(/\]\(/g, `]${ZWSP}(`)
    .replace(/[`~]{3,}/g, (run) => run.split('').join(ZWSP));
}

/** One line of Zulip text (a title inside the console's `**…**`): line breaks become spaces. */
export function zulipLine(outside: string): string {
  return zulipText(outside.replace(/[\r\n]+/g, ' '));
}

/** ntfy sends the body as plain text (no `Markdown: yes` header is set), so only control and bidi characters need showing. */
export function plainText(outside: string): string {
  return escapeControls(outside, { lines: true });
}

/** An HTTP header value (ntfy's Title): printable ASCII only, so no CR/LF can start another header. */
export function headerText(outside: string): string {
  return outside.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
}
