/**
 * Starts the web app: opens the trace library, optionally adds the bundled
 * sample trace or a file to open, starts the HTTP server and prints the URL.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from './api/create_server.ts';
import { registerFleets } from './fleet/registry.ts';
import { resolveDataDir } from './ingest/data_dir.ts';
import { TraceLibrary } from './ingest/library.ts';
import { prestartIngestThreads } from './ingest/worker_pool.ts';
import { DESKTOP_LINK_BASE, openDesktopChannel } from './desktop/desktop_channel.ts';

/** The trace `npm start` puts in the library: a real recording (fixtures/README.md). */
export const SAMPLE_TRACE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../fixtures/reclaim_kswapd.v7.dat',
);

export interface ServeOptions {
  dataDir?: string;
  port: number;
  host: string;
  sample?: boolean;
  token?: string;
  maxUploadBytes?: number;
  /** `--public-url`, `--allow-host` (server/api/public_url.ts). */
  publicUrl?: string;
  allowHosts?: string[];
  /** `--fleet DIR` (repeatable): fleet datasets the app may open, named by their directory's name (server/fleet/registry.ts). */
  fleets?: string[];
  openFile?: string;
  openBrowser?: boolean;
  /** A share link's view and fragment to open here (`stallscope open URL`); its trace is `openFile` when given. */
  openLink?: { trace: string; search: string; hash: string };
  /**
   * Serve one desktop window (desktop/): the token arrives on stdin, the
   * address goes to stdout as JSON, files are opened on the shell's request,
   * and the server stops when stdin ends (server/desktop/desktop_channel.ts).
   */
  desktop?: boolean;
}

export async function serve(opts: ServeOptions): Promise<void> {
  const dataDir = resolveDataDir(opts.dataDir);
  // Desktop: listen to the parent before anything slow, so its pipe's end is never missed.
  const channel = opts.desktop ? openDesktopChannel() : null;
  if (channel && (opts.host !== '127.0.0.1' || opts.openFile || opts.openLink || opts.openBrowser)) {
    throw new Error("serve --desktop listens on 127.0.0.1 only and opens files on the desktop shell's request");
  }
  const token = channel ? await channel.token : (opts.token ?? process.env.STALLSCOPE_TOKEN ?? undefined);
  const fleets = await registerFleets(opts.fleets ?? []);
  const library = await TraceLibrary.open(dataDir);
  const server = await createServer({
    library,
    fleets,
    port: opts.port,
    host: opts.host,
    maxUploadBytes: opts.maxUploadBytes,
    token,
    publicUrl: opts.publicUrl,
    allowHosts: opts.allowHosts,
  });
  const base = `${server.publicBaseUrl}/`;
  process.stderr.write(`stallscope: data directory ${dataDir}\n`);

  let target = base;
  const toIngest = opts.openFile ?? (opts.sample ? SAMPLE_TRACE : null);
  if (toIngest) {
    process.stderr.write(`stallscope: ingesting ${toIngest} ...\n`);
    let record;
    try {
      record = await library.ingest(toIngest, { name: path.basename(toIngest) });
    } catch (err) {
      // Nothing to open: stop listening so the command exits with the error
      // instead of leaving a server running with nothing to show.
      await server.close();
      await library.close();
      throw err;
    }
    process.stderr.write(
      `stallscope: ${record.name}: ${record.eventsTotal.toLocaleString('en')} events, ` +
        `${record.findingsBySeverity.critical} critical / ${record.findingsBySeverity.warn} warn findings\n`,
    );
    if (opts.openFile) {
      target = `${base}?trace=${record.id}`;
      // As after an upload: summarise the timeline before the browser asks,
      // so the first view paints at once (bounded: a failure or a slow trace
      // only means the first view builds the summaries itself).
      if (record.status !== 'failed') {
        await Promise.race([
          server.warm(record.id).catch(() => undefined),
          new Promise((r) => setTimeout(r, 20_000).unref()),
        ]);
      }
    }
  }
  if (opts.openLink) {
    const l = opts.openLink;
    target = `${base}${l.search}`;
    if (!(await library.get(l.trace))) {
      process.stderr.write(
        `stallscope: that trace is not in this library: the page asks for its file (or run: stallscope open URL FILE)\n`,
      );
    }
  }
  if (channel) {
    // Links in excerpts and exports: the team server's (--public-url), else ones
    // the desktop app opens; never this window's port, which is gone when it closes.
    if (!opts.publicUrl) server.ctx.publicBaseUrl = () => DESKTOP_LINK_BASE;
    // The shell adds the token itself: it never comes back over the pipe.
    channel.ready(server.url);
    channel.serveRequests(server.ctx);
    process.stderr.write(`stallscope: serving the desktop window at ${server.url}\n`);
  } else {
    const withToken = `${token ? `${target}${target.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}` : target}${opts.openLink?.hash ?? ''}`;
    process.stdout.write(`stallscope is running at ${withToken}\n`);
    if (opts.openBrowser) openInBrowser(withToken);
  }
  // Uploads of 16 MB and more load on two threads: boot them now, not at the
  // first upload (worker_pool.ts). A failure here only means the upload boots them.
  void prestartIngestThreads().catch(() => undefined);

  const stop = async () => {
    // Unfinished ingests are marked failed by server.close(); their half-built
    // work is removed at the next start (removeStaleWork). Never hang on exit.
    setTimeout(() => process.exit(0), 5000).unref();
    await server.close();
    await library.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // The window closed or its shell died: nobody can use this server any more.
  void channel?.closed.then(stop);
}

function openInBrowser(url: string): void {
  const child = spawn('xdg-open', [url], { stdio: 'ignore', detached: true });
  child.on('error', () => process.stderr.write(`stallscope: could not start a browser; open ${url}\n`));
  child.unref();
}
