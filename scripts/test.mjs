#!/usr/bin/env node
// `npm test`: build, typecheck, lint, then every test tier (unit, integration,
// e2e) with vitest. The last line is the plain summary CI reads:
// `N passed, N failed` — gates (build, typecheck, lint) count as one test each.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';

const gates = [
  // electron-vite's bin file ships without its exec bit: run it through node.
  ['build', process.execPath, ['node_modules/electron-vite/bin/electron-vite.js', 'build']],
  ['typecheck (main, preload, tests)', 'npx', ['tsc', '-p', 'tsconfig.node.json', '--noEmit']],
  ['typecheck (renderer)', 'npx', ['tsc', '-p', 'tsconfig.web.json', '--noEmit']],
  ['lint', 'npx', ['eslint', '.', '--max-warnings', '0']],
];
const only = process.argv.slice(2);

let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
if (only.length === 0) {
  for (const [name, cmd, args] of gates) {
    process.stdout.write(`\n== ${name}\n`);
    const r = spawnSync(cmd, args, { stdio: 'inherit' });
    if (r.status === 0) passed++;
    else {
      failed++;
      failures.push(name);
    }
  }
}

// Two passes: everything in parallel, then the timing-sensitive files
// (`*.timing.test.ts`: measured rates checked within a few percent) one at a
// time, so that other tests' load does not skew what they measure.
const passes =
  only.length > 0
    ? [{ name: 'selected tests', args: only }]
    : [
        { name: 'tests (unit, integration, e2e)', args: ['--exclude', '**/*.timing.test.ts'] },
        { name: 'timing-sensitive tests, one file at a time', args: ['--no-file-parallelism', 'timing.test.ts'] },
      ];
for (const [i, pass] of passes.entries()) {
  const report = `.vitest-report-${i}.json`;
  rmSync(report, { force: true });
  process.stdout.write(`\n== ${pass.name}\n`);
  const vitest = spawnSync('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...pass.args], {
    stdio: 'inherit',
  });
  if (existsSync(report)) {
    const json = JSON.parse(readFileSync(report, 'utf8'));
    passed += json.numPassedTests ?? 0;
    failed += (json.numFailedTests ?? 0) + (json.numRuntimeErrorTestSuites ?? 0);
    if ((json.numFailedTestSuites ?? 0) > 0 && (json.numFailedTests ?? 0) === 0) failed += json.numFailedTestSuites;
    skipped += (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
  } else {
    failed++;
    failures.push(`${pass.name}: vitest produced no report`);
  }
  if (vitest.status !== 0 && failed === 0) {
    failed++;
    failures.push(`${pass.name}: vitest exited ${vitest.status}`);
  }
}
if (failures.length) process.stdout.write(`failed gates: ${failures.join(', ')}\n`);
process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(failed === 0 ? 0 : 1);
