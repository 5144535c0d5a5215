import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../../src-main/core/config/index.js';

const host = (extra: string) => `hosts:\n  - label: l20\n    ssh: { host: 127.0.0.1, user: u, agent: true }\n    pricePerHourUsd: 2.641736\n${extra}`;
const parse = (text: string) => parseConfig(text, { file: 'c.yaml', home: '/home/u' });

describe('budget config', () => {
  it('reads a host budget and a fleet budget', () => {
    const c = parse(`${host('    monthlyBudgetUsd: 500\n')}budget:\n  monthlyUsd: 1000\n`);
    expect(c.hosts[0]!.monthlyBudgetUsd).toBe(500);
    expect(c.budget?.monthlyUsd).toBe(1000);
  });
  it('refuses zero, negative, huge and non-numbers, naming the field', () => {
    for (const bad of ['0', '-5', '1e12', 'lots']) {
      expect(() => parse(host(`    monthlyBudgetUsd: ${bad}\n`))).toThrow();
      try {
        parse(host(`    monthlyBudgetUsd: ${bad}\n`));
      } catch (err) {
        expect(JSON.stringify(err) + String((err as Error).message)).toContain('monthlyBudgetUsd');
      }
    }
    expect(() => parse('budget:\n  monthlyUsd: 0\n')).toThrow();
    expect(() => parse('budget:\n  monthlyUsd: 5\n  extra: 1\n')).toThrow();
  });
});
