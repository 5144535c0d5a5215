import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../../src-main/core/config/index.js';
import { EXAMPLE, configIssues, withLine } from './fixtures.js';

// proxy.capture (issue #32 item 5): off by default; a cap of zero or below, a sample rate outside
// 0..1 or an empty name is refused naming the field and its line.

describe('proxy.capture config', () => {
  it('is off by default, failures only, 64 KiB bodies, kept 7 days / 10,000 / 256 MiB', () => {
    expect(parseConfig(EXAMPLE, { file: 'config.yaml', home: '/home/me' }).proxy.capture).toEqual({
      enabled: false,
      failures: true,
      sampleRate: 0,
      models: [],
      tokens: [],
      maxBodyBytes: 65536,
      retention: { days: 7, rows: 10000, bytes: 268435456 },
    });
  });

  it('takes what it is given', () => {
    const c = parseConfig(withLine(18, 'proxy:', '  capture: { enabled: true, sampleRate: 0.05, models: [qwen], tokens: [app], maxBodyBytes: 1024, retention: { days: 1, rows: 50, bytes: 4096 } }'), {
      file: 'config.yaml',
      home: '/home/me',
    }).proxy.capture;
    expect(c).toMatchObject({ enabled: true, failures: true, sampleRate: 0.05, models: ['qwen'], tokens: ['app'], maxBodyBytes: 1024, retention: { days: 1, rows: 50, bytes: 4096 } });
  });

  it.each([
    ['maxBodyBytes: 0', 'proxy.capture.maxBodyBytes', /between 1 and/],
    ['maxBodyBytes: -5', 'proxy.capture.maxBodyBytes', /between 1 and/],
    ['retention: { rows: 0 }', 'proxy.capture.retention.rows', /between 1 and/],
    ['retention: { days: -1 }', 'proxy.capture.retention.days', /between 1 and/],
    ['retention: { bytes: 0 }', 'proxy.capture.retention.bytes', /between 1024 and/],
    ['sampleRate: 1.5', 'proxy.capture.sampleRate', /between 0 and 1/],
    ["models: ['']", 'proxy.capture.models[0]', /must not be empty/],
    ['keepForever: true', 'proxy.capture.keepForever', /unknown key/],
  ])('refuses %s naming %s', (field, path, message) => {
    const issues = configIssues(withLine(18, 'proxy:', `  capture: { enabled: true, ${field} }`));
    expect(issues).toEqual([expect.objectContaining({ path, line: 19, message: expect.stringMatching(message) })]);
  });
});
