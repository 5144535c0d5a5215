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

function electronBinary() {
  try {
    const require = createRequire(import.meta.url);
    const path = require('electron');
    if (typeof path === 'string' && existsSync(path)) return { path };
    return { reason: 'the Electron binary is not downloaded (it is fetched on first use, and this machine could not fetch it)' };
  } catch (err) {
    return { reason: `the electron package is not usable: ${err.message}` };
  }
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
