import { describe, expect, it } from 'vitest';
import { classifyPrompt } from '../../../../src-main/core/ssh/openssh-login.js';

// Who may answer an askpass prompt (issue #26, finding 2): a stored passphrase
// goes only to ssh's own question for the host's identityFile, matched whole.

const KEY = '/home/op/.ssh/id_ed25519';

describe('classifyPrompt', () => {
  it("answers ssh's own question for the configured key, and only that", () => {
    expect(classifyPrompt(`Enter passphrase for key '${KEY}': `, [KEY])).toEqual({ kind: 'passphrase', keyFile: KEY });
    expect(classifyPrompt(`Enter passphrase for key '${KEY}':`, [KEY])).toEqual({ kind: 'passphrase', keyFile: KEY });
    // Another path, a prefix of it, or the same words under another key: not the configured key.
    expect(classifyPrompt("Enter passphrase for key '/home/op/.ssh/id_rsa': ", [KEY])).toEqual({ kind: 'other-key', keyFile: '/home/op/.ssh/id_rsa' });
    expect(classifyPrompt(`Enter passphrase for key '${KEY}.old': `, [KEY])).toMatchObject({ kind: 'other-key' });
    expect(classifyPrompt(`Enter passphrase for key '${KEY}': `, [])).toMatchObject({ kind: 'other-key' });
  });

  it("a host's keyboard-interactive question is the operator's, whatever its words", () => {
    for (const words of [`Enter passphrase for key '${KEY}':`, `passphrase for ${KEY}`, `x\nEnter passphrase for key '${KEY}':`]) {
      const asked = classifyPrompt(`(op@gpu-1) ${words} `, [KEY]);
      expect(asked.kind).toBe('operator');
    }
    expect(classifyPrompt('(op@gpu-1) Verification code: ', [KEY])).toEqual({ kind: 'operator', text: '(op@gpu-1) Verification code:' });
    // The old unanchored match took these for passphrase prompts.
    expect(classifyPrompt(`Please Enter passphrase for key '${KEY}': `, [KEY]).kind).toBe('operator');
    expect(classifyPrompt(`Enter passphrase for key '${KEY}': and more`, [KEY]).kind).toBe('operator');
  });

  it('ssh names at most 100 bytes of a long path: that truncation still matches the configured key, nothing shorter does', () => {
    const long = `/home/op/${'k'.repeat(120)}/id_ed25519`;
    expect(classifyPrompt(`Enter passphrase for key '${long.slice(0, 100)}': `, [long])).toEqual({ kind: 'passphrase', keyFile: long });
    expect(classifyPrompt(`Enter passphrase for key '${long.slice(0, 99)}': `, [long]).kind).toBe('other-key');
  });

  it('a FIDO touch request is recognised only whole', () => {
    expect(classifyPrompt('Confirm user presence for key ED25519-SK SHA256:abcDEF+/123=', [KEY])).toEqual({ kind: 'presence' });
    expect(classifyPrompt('(op@gpu-1) Confirm user presence for key ED25519-SK SHA256:abc', [KEY]).kind).toBe('operator');
    expect(classifyPrompt('please touch your key and type the code', [KEY]).kind).toBe('operator');
  });

  it('control characters in what the operator is shown are escaped, and the text is bounded', () => {
    expect(classifyPrompt('(op@gpu-1) Code\u001b[2J\u009b: ', [])).toEqual({ kind: 'operator', text: '(op@gpu-1) Code\\x1b[2J\\x9b:' });
    const long = classifyPrompt(`(op@gpu-1) ${'x'.repeat(500)}`, []);
    expect(long.kind === 'operator' ? long.text.length : -1).toBe(200);
    expect(classifyPrompt("Enter passphrase for key '/tmp/\u001b[2Jk': ", [])).toEqual({ kind: 'other-key', keyFile: '/tmp/\\x1b[2Jk' });
  });
});
