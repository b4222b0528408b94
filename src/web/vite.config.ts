// Vite build of the web UI: src/web → dist/web, served by the API server at `/`
// (src/plugins/web.ts). `npm run web:dev` serves it on :5177 with the API proxied to :3000.
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'

const here = path.dirname(fileURLToPath(import.meta.url))
const api = process.env.API_URL ?? 'http://localhost:3000'

export default defineConfig({
  root: here,
  plugins: [react()],
  build: {
    outDir: path.join(here, '..', '..', 'dist', 'web'),
    emptyOutDir: true,
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 800,
  },
  server: {
    port: 5177,
    proxy: { '/api': api, '/ws': { target: api, ws: true }, '/health': api },
  },
})
