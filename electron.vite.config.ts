import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';

// Three bundles: main (Electron main process + the plain-Node CLI that serves the
// same core headless), preload (sandboxed, so one self-contained CommonJS file)
// and renderer (the React UI, served by Electron's app:// protocol or by the web bridge).
export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      externalizeDeps: true,
      rollupOptions: {
        input: {
          index: resolve(__dirname, 'src-main/index.ts'),
          cli: resolve(__dirname, 'src-main/cli.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      // A sandboxed preload cannot require node_modules: bundle zod into it.
      externalizeDeps: false,
      rollupOptions: {
        input: { index: resolve(__dirname, 'src-preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(__dirname, 'src-renderer'),
    base: './',
    build: {
      outDir: resolve(__dirname, 'out/renderer'),
      emptyOutDir: true,
      rollupOptions: { input: { index: resolve(__dirname, 'src-renderer/index.html') } },
    },
    plugins: [react()],
  },
});
