/**
 * The few W3C WebDriver commands the desktop test needs, spoken over HTTP to
 * tauri-driver (which hands them to Debian's WebKitWebDriver, which drives
 * the real window's web view). Written here rather than taken from a client
 * library: a dozen endpoints, and nothing to download.
 */

/** How WebDriver names an element in JSON (W3C WebDriver, "web element identifier"). */
const ELEMENT_KEY = 'element-6066-11e4-a07c-4e4e30ddd85e';

export class WebDriverError extends Error {}

export interface Element {
  readonly id: string;
}

export class Session {
  private constructor(
    private readonly base: string,
    readonly id: string,
  ) {}

  /** Starts the application (`tauri:options`) and a session on its window. */
  static async start(driverUrl: string, application: string, args: string[] = []): Promise<Session> {
    const body = { capabilities: { alwaysMatch: { 'tauri:options': { application, args } } } };
    const value = (await call(driverUrl, 'POST', '/session', body, 120_000)) as { sessionId: string };
    return new Session(driverUrl, value.sessionId);
  }

  private cmd(method: string, path: string, body?: unknown, timeoutMs?: number): Promise<unknown> {
    return call(this.base, method, `/session/${this.id}${path}`, body, timeoutMs);
  }

  url(): Promise<string> {
    return this.cmd('GET', '/url') as Promise<string>;
  }

  title(): Promise<string> {
    return this.cmd('GET', '/title') as Promise<string>;
  }

  async find(css: string): Promise<Element[]> {
    const found = (await this.cmd('POST', '/elements', { using: 'css selector', value: css })) as Record<
      string,
      string
    >[];
    // W3C's key; WebKitWebDriver may answer with the older protocol's `ELEMENT`.
    return found.map((e) => ({ id: e[ELEMENT_KEY] ?? e.ELEMENT ?? Object.values(e)[0] }));
  }

  click(e: Element): Promise<unknown> {
    return this.cmd('POST', `/element/${e.id}/click`, {});
  }

  attribute(e: Element, name: string): Promise<string | null> {
    return this.cmd('GET', `/element/${e.id}/attribute/${name}`) as Promise<string | null>;
  }

  rect(e: Element): Promise<{ x: number; y: number; width: number; height: number }> {
    return this.cmd('GET', `/element/${e.id}/rect`) as Promise<{ x: number; y: number; width: number; height: number }>;
  }

  text(e: Element): Promise<string> {
    return this.cmd('GET', `/element/${e.id}/text`) as Promise<string>;
  }

  execute<T>(script: string, args: unknown[] = []): Promise<T> {
    return this.cmd('POST', '/execute/sync', { script, args }) as Promise<T>;
  }

  /** The window as a PNG. */
  async screenshot(): Promise<Buffer> {
    return Buffer.from((await this.cmd('GET', '/screenshot')) as string, 'base64');
  }

  /** Closes the window (as its close button does), not just the session. */
  closeWindow(): Promise<unknown> {
    return this.cmd('DELETE', '/window', undefined, 30_000);
  }

  end(): Promise<unknown> {
    return call(this.base, 'DELETE', `/session/${this.id}`, undefined, 30_000);
  }
}

async function call(base: string, method: string, path: string, body: unknown, timeoutMs = 30_000): Promise<unknown> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let parsed: { value?: unknown };
  try {
    parsed = JSON.parse(text) as { value?: unknown };
  } catch {
    throw new WebDriverError(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  }
  const v = parsed.value as { error?: string; message?: string } | undefined;
  if (!res.ok || (v && typeof v === 'object' && typeof v.error === 'string')) {
    throw new WebDriverError(`${method} ${path}: ${v?.error ?? res.status}: ${v?.message ?? text.slice(0, 200)}`);
  }
  return parsed.value;
}

/** Polls `probe` until it returns something other than undefined (errors count as not yet). */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 250,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`,
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
