import { describe, expect, it } from 'vitest';
import { escapeControls, escapeJsonControls } from '../../../../src-main/core/base/index.js';

// Text from outside the console is printed on terminals: no control character
// in it may reach the terminal as itself.

// eslint-disable-next-line no-control-regex -- looking for control characters is the point
const RAW = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('escapeControls', () => {
  it('shows ESC sequences, C1 codes, DEL and bidi overrides as visible escapes', () => {
    expect(escapeControls('ok\u001b[2J\u001b]0;pwned\u0007')).toBe('ok\\x1b[2J\\x1b]0;pwned\\x07');
    expect(escapeControls('a\u009b31mb\u007f')).toBe('a\\x9b31mb\\x7f');
    expect(escapeControls('file\u202egnp.exe')).toBe('file\\u202egnp.exe');
    expect(escapeControls('plain text, ünïcode ✓')).toBe('plain text, ünïcode ✓');
  });

  it('one line by default; with lines: true the newlines and tabs stay but a carriage return does not', () => {
    expect(escapeControls('reason\napprove: yes\r\tx')).toBe('reason\\napprove: yes\\r\\tx');
    expect(escapeControls('a\n\tb\rc\u001bd', { lines: true })).toBe('a\n\tb\\rc\\x1bd');
  });

  it('leaves nothing raw, for every code point below U+00A0', () => {
    const all = Array.from({ length: 0xa0 }, (_, i) => String.fromCharCode(i)).join('');
    expect(escapeControls(all)).not.toMatch(RAW);
    expect(escapeControls(all, { lines: true }).replace(/[\n\t]/g, '')).not.toMatch(RAW);
  });
});

describe('escapeJsonControls', () => {
  it('escapes what JSON.stringify leaves raw, and the value reads back the same', () => {
    const value = { reason: 'x\u009b2J\u007f\u202e\u001b' };
    const json = escapeJsonControls(JSON.stringify(value));
    expect(json).not.toMatch(RAW);
    expect(JSON.parse(json)).toEqual(value);
  });
});
