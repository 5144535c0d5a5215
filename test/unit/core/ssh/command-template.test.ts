import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { renderCommand, templateParameters } from '../../../../src-main/core/ssh/index.js';

describe('command templates', () => {
  it('fills each placeholder with one shell-quoted argument', () => {
    expect(renderCommand('systemctl --user restart {unit}', { unit: 'vllm@qwen.service' })).toBe('systemctl --user restart vllm@qwen.service');
    expect(templateParameters('docker restart {c} && echo {{done}} {c}')).toEqual(['c']);
  });

  it('cannot be escaped from config values or UI input (checked by a real sh)', () => {
    for (const evil of ['x; touch /tmp/pwned', '$(id)', '`id`', "a'b", 'a\nb', '--help', '*', '"$HOME"']) {
      const cmd = renderCommand('printf %s {v}', { v: evil });
      expect(execFileSync('sh', ['-c', cmd], { encoding: 'utf8' })).toBe(evil);
    }
  });

  it('refuses stray braces, missing and unknown parameters', () => {
    expect(() => renderCommand('echo {a', { a: '1' })).toThrow(expect.objectContaining({ code: 'SSH_TEMPLATE_INVALID' }));
    expect(() => renderCommand('echo {a} {b}', { a: '1' })).toThrow(/missing b/);
    expect(() => renderCommand('echo {a}', { a: '1', typo: '2' })).toThrow(/unknown typo/);
  });
});
