/**
 * The one place that says what this server is called: the public base URL
 * written into share links, excerpts and exports, and the Host names it
 * answers to.
 *
 *   publicBaseUrl(ctx)  -> "http://127.0.0.1:7420" (no trailing slash)
 *
 * Links never take their host from the request's Host header: a page on
 * attacker.example that rebinds its name to 127.0.0.1 would otherwise have
 * its own name written into every excerpt and export the user copies. The
 * base is `--public-url` when given (a team server behind a proxy), else the
 * bound address (a wildcard bind, 0.0.0.0 or ::, becomes 127.0.0.1).
 *
 * Host allow-list (checked on every request, server/api/access.ts):
 * loopback names and addresses (localhost, *.localhost, 127.0.0.0/8, ::1),
 * the bound address, every local interface address when bound to a
 * wildcard, `--public-url`'s host, and each `--allow-host` name. A DNS
 * rebinding page always arrives with its own domain in Host, so a name
 * outside this list is refused before any route runs.
 */
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

export interface PublicUrlOptions {
  /** The address the server listens on (default 127.0.0.1). */
  host?: string;
  /** The port it listens on (the real one once listening). */
  port: number;
  /** `--public-url`: what users reach the server as (scheme, host, port, optional path). */
  publicUrl?: string;
  /** `--allow-host`: more names the server answers to (a team server's DNS names). */
  allowHosts?: string[];
}

/** Checks and normalises `--public-url`: http(s), no query or fragment, no trailing slash. */
export function parsePublicUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`--public-url ${JSON.stringify(raw)} is not a URL (give e.g. https://stallscope.example.org)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new Error(`--public-url must be http:// or https://, got ${u.protocol}`);
  if (u.search || u.hash || u.username || u.password)
    throw new Error('--public-url must not carry a query, fragment or credentials');
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

/** A Host header's (or URL's) host name: lower case, brackets and port removed, one trailing dot dropped. */
export function hostName(hostHeader: string): string | null {
  const h = hostHeader.trim().toLowerCase();
  let name: string;
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    if (end < 0) return null;
    name = h.slice(1, end);
    const rest = h.slice(end + 1);
    if (rest && !/^:\d{1,5}$/.test(rest)) return null;
  } else {
    const m = /^([^:]*)(?::(\d{1,5}))?$/.exec(h);
    if (!m) return null;
    name = m[1]!;
  }
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (!name || !/^[a-z0-9.:_-]+$/.test(name)) return null;
  return name;
}

function isLoopback(name: string): boolean {
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  if (isIP(name) === 6) return name === '::1' || name === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(name);
  return false;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '0:0:0:0:0:0:0:0']);

/** The names a Host header may carry for this server (see the module comment). */
export class HostAllowList {
  private readonly names = new Set<string>();

  constructor(opts: PublicUrlOptions) {
    const bound = (opts.host ?? '127.0.0.1').toLowerCase();
    if (WILDCARDS.has(bound)) {
      for (const list of Object.values(networkInterfaces()))
        for (const a of list ?? []) this.names.add(a.address.toLowerCase());
    } else {
      this.add(bound);
    }
    if (opts.publicUrl) this.add(new URL(opts.publicUrl).host);
    for (const h of opts.allowHosts ?? []) this.add(h);
  }

  private add(host: string): void {
    const n = hostName(host.includes(':') && !host.startsWith('[') && isIP(host) === 6 ? `[${host}]` : host);
    if (n) this.names.add(n);
  }

  /** Does a request with this Host header come to us by a name we answer to? */
  allows(hostHeader: string | undefined): boolean {
    if (hostHeader === undefined) return true; // HTTP/1.0 without Host: not a browser, nothing to rebind
    const n = hostName(hostHeader);
    return n !== null && (isLoopback(n) || this.names.has(n));
  }
}

/**
 * The base URL links are written with: `--public-url`, else the bound
 * address and port (a wildcard bind becomes 127.0.0.1).
 */
export function resolvePublicBaseUrl(opts: PublicUrlOptions): string {
  if (opts.publicUrl) return parsePublicUrl(opts.publicUrl);
  let host = opts.host ?? '127.0.0.1';
  if (WILDCARDS.has(host.toLowerCase())) host = '127.0.0.1';
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${opts.port}`;
}

/** The public base URL of this server (no trailing slash): what links, excerpts and exports are written with. */
export function publicBaseUrl(ctx: { publicBaseUrl: () => string }): string {
  return ctx.publicBaseUrl();
}
