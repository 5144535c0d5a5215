#!/usr/bin/env node
// `npm start`: build, then open the desktop app on the demo fleet (or on your
// config). When the Electron binary cannot be had, or there is no display, say
// so and run the same console headless (`gpu-console serve`), printing its URL.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const args = process.argv.slice(2);
process.stdout.write('Building GPU Console…\n');
const build = spawnSync(process.execPath, ['node_modules/electron-vite/bin/electron-vite.js', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
if (build.status !== 0) {
  process.stderr.write('npm start: the build failed (see above)\n');
  process.exit(1);
}

function resolveElectron() {
  try {
    const require = createRequire(import.meta.url);
    const path = require('electron');
    return typeof path === 'string' && existsSync(path) ? path : null;
  } catch {
    return null;
  }
}

// The electron package's own download step is not run by `npm ci` (see
// allowScripts in package.json): it is fetched here, the first time the
// desktop app is started, so installs work on machines that cannot reach it.
function electronBinary() {
  const found = resolveElectron();
  if (found) return { path: found };
  process.stdout.write('Fetching the Electron binary (first desktop start only)…\n');
  const fetched = spawnSync(process.execPath, ['node_modules/electron/install.js'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 300_000 });
  const again = fetched.status === 0 ? resolveElectron() : null;
  if (again) return { path: again };
  const why = (fetched.stderr?.toString() ?? '').split('\n').find((l) => /error/i.test(l)) ?? `exit ${fetched.status}`;
  return { reason: `the Electron binary could not be downloaded (${why.trim().slice(0, 160)})` };
}

const hasDisplay = process.platform !== 'linux' || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
const electron = hasDisplay ? electronBinary() : { reason: 'there is no display (DISPLAY/WAYLAND_DISPLAY unset)' };

function runHeadless(reason) {
  process.stdout.write(`Desktop app not started: ${reason}.\nRunning headless instead — open the ui= URL below in a browser.\n`);
  const child = spawn(process.execPath, ['bin/gpu-console.js', 'serve', ...args], { stdio: 'inherit' });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code) => process.exit(code ?? 0));
}

if (!electron.path) runHeadless(electron.reason);
else {
  const child = spawn(electron.path, ['.', ...args], { stdio: 'inherit' });
  child.on('error', (err) => runHeadless(`Electron failed to start (${err.message})`));
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal === null) runHeadless(`Electron exited with code ${code}`);
    else process.exit(code ?? 0);
  });
}
