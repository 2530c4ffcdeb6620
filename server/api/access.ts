/**
 * Who may do what, decided once per request before any route runs
 * (an onRequest hook: fastify has already matched the route, so the
 * decisions use the route it matched, never the raw URL the client wrote):
 *
 * 1. Host: the Host header must name this server (public_url.ts
 *    HostAllowList), else 421. A DNS-rebinding page arrives with its own
 *    domain in Host.
 * 2. Cross-site: every API request, and every request that changes state
 *    (anything but GET/HEAD/OPTIONS), must come from this origin: a
 *    browser's `Sec-Fetch-Site` must be `same-origin` or `none` (typed in,
 *    curl), and an `Origin` header, when there is one, must be this
 *    server's. Else 403. `same-site` is refused too: a page on another
 *    port of 127.0.0.1 is same-site.
 * 3. Token (when the server has one): every route the router matched
 *    under /api needs it, as `Authorization: Bearer`, `X-Stallscope-Token`,
 *    or the HttpOnly cookie the app page sets. The decision is on the
 *    matched route pattern, so `/%61pi/traces` (which the router decodes
 *    to /api/traces) needs it as much as `/api/traces`. `?token=` is only
 *    read on the app page: it is exchanged there for the cookie
 *    (HttpOnly, SameSite=Strict) and the app removes it from the address
 *    bar.
 * 4. Every answer carries a Content-Security-Policy with
 *    `frame-ancestors 'none'` (and X-Frame-Options: DENY), nosniff,
 *    no-referrer, and a same-origin resource policy.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from './http_errors.ts';
import { hostName, type HostAllowList } from './public_url.ts';

export interface AccessOptions {
  /** The access token, if the server has one. */
  token?: string;
  hosts: HostAllowList;
  /** The port the server listens on (names the cookie: two servers on one host keep separate tokens). */
  port: () => number;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  // React style attributes (positions, colours) are inline styles.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The cookie that carries the token after the first visit (per port: cookies ignore ports). */
export function tokenCookieName(port: number): string {
  return `stallscope_token_${port}`;
}

/** Is this a route of the API (by the pattern the router matched, not the URL as written)? */
export function isApiRoute(req: FastifyRequest): boolean {
  const pattern = req.routeOptions.url;
  return pattern !== undefined && (pattern === '/api' || pattern.startsWith('/api/'));
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function cookie(req: FastifyRequest, name: string): string | undefined {
  const raw = req.headers.cookie;
  if (!raw) return undefined;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The token a request carries in a header or the cookie (never the query). */
function givenToken(req: FastifyRequest, cookieName: string): string | undefined {
  const auth = header(req, 'authorization');
  if (auth?.startsWith('Bearer ')) return auth.slice(7);
  return header(req, 'x-stallscope-token') ?? cookie(req, cookieName);
}

/** Refuses a request a browser sent from another origin (see the module comment, 2). */
function checkSameOrigin(req: FastifyRequest): void {
  const site = header(req, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw new HttpError(
      403,
      `refused: this request came from another site (Sec-Fetch-Site: ${site.slice(0, 20)}); stallscope only answers its own pages`,
    );
  }
  const origin = header(req, 'origin');
  if (origin === undefined) return;
  let ok = false;
  try {
    const o = new URL(origin);
    const host = header(req, 'host');
    ok =
      host !== undefined &&
      (o.protocol === 'http:' || o.protocol === 'https:') &&
      o.host === new URL(`http://${host}`).host;
  } catch {
    ok = false;
  }
  if (!ok)
    throw new HttpError(
      403,
      `refused: this request came from another origin (${origin.slice(0, 80)}); stallscope only answers its own pages`,
    );
}

const routesOf = new WeakMap<FastifyInstance, Array<{ method: string; url: string }>>();

/** Every API route registered after registerAccessControl (tests check each of them). */
export function apiRoutes(app: FastifyInstance): Array<{ method: string; url: string }> {
  return routesOf.get(app) ?? [];
}

export function registerAccessControl(app: FastifyInstance, opts: AccessOptions): void {
  const routes: Array<{ method: string; url: string }> = [];
  routesOf.set(app, routes);
  app.addHook('onRoute', (r) => {
    if (r.url !== '/api' && !r.url.startsWith('/api/')) return;
    for (const m of Array.isArray(r.method) ? r.method : [r.method])
      if (m !== 'HEAD') routes.push({ method: m, url: r.url });
  });
  app.addHook('onRequest', async (req, reply) => {
    reply
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cross-origin-resource-policy', 'same-origin')
      // same-origin-allow-popups, not same-origin: "Open in Perfetto" keeps the
      // handle of the ui.perfetto.dev window it opens to post the trace to it.
      .header('cross-origin-opener-policy', 'same-origin-allow-popups');

    const host = header(req, 'host');
    if (!opts.hosts.allows(host)) {
      const name = host === undefined ? '' : (hostName(host) ?? host.slice(0, 80));
      throw new HttpError(
        421,
        `refused: this server does not answer to the name ${JSON.stringify(name)} (start it with --allow-host ${name || 'NAME'} or --public-url to add one)`,
      );
    }

    const api = isApiRoute(req);
    if (api || !SAFE_METHODS.has(req.method)) checkSameOrigin(req);

    const token = opts.token;
    if (!token) return;
    const cookieName = tokenCookieName(opts.port());
    if (api) {
      const given = givenToken(req, cookieName);
      if (!given || !safeEqual(given, token)) {
        throw new HttpError(
          401,
          'this server needs an access token: open the URL it printed (with ?token=...) once, or send Authorization: Bearer <token>',
        );
      }
      return;
    }
    // The app page: a first visit with ?token= gets the token as a cookie.
    const q = req.query as Record<string, unknown> | undefined;
    const fromUrl = typeof q?.token === 'string' ? q.token : undefined;
    if (req.method === 'GET' && fromUrl && safeEqual(fromUrl, token)) {
      reply.header('set-cookie', `${cookieName}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Strict`);
    }
  });
}
