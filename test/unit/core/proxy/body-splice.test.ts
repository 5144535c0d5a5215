import { describe, expect, it } from 'vitest';
import { spliceModel } from '../../../../src-main/core/proxy/body-splice.js';

// Issue #31 item 2: an alias is renamed to the served model in the bytes as sent; the result must
// mean exactly what re-serialising the parsed body with the new name means, whatever the name holds.

const ODD_NAMES = ['Qwen/Qwen3-8B', 'a"b', 'back\\slash\\', 'ünï—✓ 😀', 'tab\tnew\nline\u0001', '\u2028\u2029', '</script>', '', '"'];

const BODIES = [
  '{"model":"qwen","messages":[{"role":"user","content":"hi"}]}',
  ' \n{ "messages" : [ { "role" : "model", "content" : "{\\"model\\":\\"x\\"}" } ] ,\n  "model" : "qwen" , "n": 1 }\n',
  '{"stream":true,"meta":{"model":"inner","list":[{"model":"deep"}]},"model":"qwen","tail":"\\\\"}',
  '{"a":"ends in a backslash \\\\","model":"qwen","b":[1,2.5e3,null,true,false,{}],"c":{}}',
  '{"model":"q\\"w\\\\en"}',
];

describe('spliceModel', () => {
  it('gives what re-serialising with the new name gives, for odd names and odd bodies, touching nothing else', () => {
    for (const raw of BODIES) {
      const parsed = JSON.parse(raw) as Record<string, unknown>;
      for (const name of ODD_NAMES) {
        const out = spliceModel(Buffer.from(raw), name);
        expect(out, raw).not.toBeNull();
        expect(JSON.parse(out!.toString()), `${raw} ← ${JSON.stringify(name)}`).toEqual({ ...parsed, model: name });
        // Only the value changed: the bytes before and after it are the client's.
        const value = raw.includes('"qwen"') ? '"qwen"' : '"q\\"w\\\\en"';
        expect(out!.toString()).toBe(raw.replace(value, () => JSON.stringify(name)));
      }
    }
  });

  it('leaves to the rewrite what it cannot be sure of: the key twice, a key with escapes, no model, a model not a string', () => {
    expect(spliceModel(Buffer.from('{"model":"a","x":1,"model":"b"}'), 'Q')).toBeNull();
    expect(spliceModel(Buffer.from('{"model":"a","mod\\u0065l":"b"}'), 'Q')).toBeNull();
    expect(spliceModel(Buffer.from('{"messages":[{"model":"a"}]}'), 'Q')).toBeNull();
    expect(spliceModel(Buffer.from('{"model":7}'), 'Q')).toBeNull();
    expect(spliceModel(Buffer.from('[{"model":"a"}]'), 'Q')).toBeNull();
  });
});
