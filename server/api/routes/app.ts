/**
 * Serves the built app (dist/app, written by `vite build`) with an SPA
 * fallback: any GET outside /api that is not a file gets index.html, so
 * share links (`/?trace=...`) and deep paths load the app.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

export const DEFAULT_APP_DIR = fileURLToPath(new URL('../../../dist/app', import.meta.url));

export async function registerAppRoutes(app: FastifyInstance, appDir: string): Promise<void> {
  const built = existsSync(`${appDir}/index.html`);
  if (built) {
    await app.register(fastifyStatic, {
      root: appDir,
      prefix: '/',
      wildcard: true,
      index: 'index.html',
      setHeaders(res, path: string) {
        // Hashed assets never change; index.html must always be revalidated.
        res.header('cache-control', /[\\/]assets[\\/]/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
  }
  app.setNotFoundHandler((req, reply) => {
    if (req.url.startsWith('/api/') || req.url === '/api') {
      return reply.code(404).send({ error: `no API route ${req.method} ${req.url.split('?')[0]}` });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply.code(404).send({ error: 'not found' });
    if (!built) {
      return reply
        .code(503)
        .type('text/plain')
        .send('The app is not built: run `npx vite build` (it writes dist/app).');
    }
    return reply.header('cache-control', 'no-cache').sendFile('index.html');
  });
}
