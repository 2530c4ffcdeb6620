import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { expect, type APIRequestContext, type Locator, type Page } from '@playwright/test';

export const SCREENSHOTS = 'test-results/screenshots';

/** Drops a file on the element the way a user's drag and drop does: a real DataTransfer on a drop event. */
export async function dropFile(
  page: Page,
  target: Locator,
  path: string,
  name = basename(path),
  type = 'application/octet-stream',
): Promise<void> {
  await dropFiles(page, target, [{ path, name, type }]);
}

/** Drops several files at once (one DataTransfer holding them all, in this order), as a multi-file drag does. */
export async function dropFiles(
  page: Page,
  target: Locator,
  files: Array<string | { path: string; name?: string; type?: string }>,
): Promise<void> {
  const items = files
    .map((f) => (typeof f === 'string' ? { path: f } : f))
    .map((f) => ({
      b64: readFileSync(f.path).toString('base64'),
      name: f.name ?? basename(f.path),
      type: f.type ?? 'application/octet-stream',
    }));
  const dataTransfer = await page.evaluateHandle((items) => {
    const dt = new DataTransfer();
    for (const { b64, name, type } of items) {
      const bin = atob(b64);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      dt.items.add(new File([bytes], name, { type }));
    }
    return dt;
  }, items);
  await target.dispatchEvent('dragenter', { dataTransfer });
  await target.dispatchEvent('dragover', { dataTransfer });
  await target.dispatchEvent('drop', { dataTransfer });
}

/** The visible window the timeline exposes (ns from the trace start). */
export async function visibleWindow(page: Page): Promise<{ t0: number; t1: number }> {
  const tl = page.getByTestId('timeline');
  return { t0: Number(await tl.getAttribute('data-t0')), t1: Number(await tl.getAttribute('data-t1')) };
}

/** Uploads a trace through the API and waits for its ingest job: the trace id. */
export async function ingest(request: APIRequestContext, file: string): Promise<string> {
  const r = await request.post(`/api/traces?name=${encodeURIComponent(basename(file))}`, {
    data: readFileSync(file),
    headers: { 'content-type': 'application/octet-stream' },
  });
  expect(r.status()).toBe(202);
  const { jobId } = await r.json();
  for (let i = 0; i < 1200; i++) {
    const s = await (await request.get(`/api/jobs/${jobId}`)).json();
    if (s.phase === 'done') return s.traceId as string;
    if (s.phase === 'failed') throw new Error(`ingest failed: ${s.error}`);
    await new Promise((res) => setTimeout(res, 250));
  }
  throw new Error('ingest did not finish');
}
