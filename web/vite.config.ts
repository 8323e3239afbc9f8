import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

// The gateway serves dist/ at http://127.0.0.1:7777/ ; `npm run dev -w @memex/web` proxies the API to it.
export default defineConfig({
  plugins: [preact()],
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    sourcemap: false,
    // Everything the page loads comes from the gateway: no inline scripts, so the CSP can forbid them.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
  server: {
    proxy: { '/api': process.env.MEMEX_URL ?? 'http://127.0.0.1:7777' },
  },
});
