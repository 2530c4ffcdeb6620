/**
 * The command surface, and nothing else: each action parses its options and
 * lazily loads the module that does the work (as vite's cli.ts does).
 *
 *   stallscope ingest FILE        build the trace model (progress on stderr)
 *   stallscope info FILE --json   facts about a trace
 *   stallscope analyze FILE       run the detectors, report or JSON, CI gate
 *   stallscope excerpt FILE SEL   a finding / event / time range as text for a review mail
 *   stallscope compare A B        metrics of traces side by side, changes, significance, histograms
 *   stallscope detectors          list detectors and their parameters
 *   stallscope batch / fleet      many traces into one Parquet dataset (one machine / Apache Spark); fleet-report: questions over it
 *   stallscope query FILE "SQL"   run SQL on a trace's model, in the query sandbox
 *   stallscope export FILE --format notes / import-notes FILE NOTES   the notes file
 *   stallscope serve              the web app on localhost
 *   stallscope open FILE          ingest, serve, open the browser on it
 *   stallscope open URL [FILE]    a share link from another stallscope, here (FILE: the trace it needs)
 */
import { cac } from 'cac';
import { DecodeError } from './decode/decoded_event.ts';
import type { IngestProgress } from './ingest/ingest_file.ts';

interface GlobalOptions {
  /** Data directory (default: $STALLSCOPE_DATA_DIR, else ~/.local/share/stallscope). */
  dataDir?: string;
}

const cli = cac('stallscope');
cli.option(
  '--data-dir <dir>',
  '[string] where ingested traces live (default: $STALLSCOPE_DATA_DIR or ~/.local/share/stallscope)',
);

cli
  .command('ingest <file>', 'Decode a trace file into the trace model (reused if ingested before)')
  .option('--force', '[boolean] rebuild even if this content was ingested before')
  .option('--quiet', '[boolean] no progress on stderr')
  .action(async (file: string, opts: GlobalOptions & { force?: boolean; quiet?: boolean }) => {
    const { ingestFile } = await import('./ingest/ingest_file.ts');
    const progress = opts.quiet ? undefined : progressPrinter();
    const result = await ingestFile(file, { dataDir: opts.dataDir, force: opts.force, onProgress: progress?.update });
    progress?.end();
    const s = result.summary;
    const rate = s.seconds.decode > 0 ? s.eventsTotal / s.seconds.decode : 0;
    if (result.replacedModelVersion !== undefined) {
      process.stderr.write(
        `rebuilt: the earlier model of this content was built by an older stallscope (model version ${result.replacedModelVersion}, now ${s.modelVersion})\n`,
      );
    }
    process.stderr.write(
      `${result.reused ? 'already ingested' : 'ingested'}: ${s.name} (${s.format}${s.formatVersion ? ` v${s.formatVersion}` : ''}` +
        `${s.compression.length ? `, ${s.compression.join('+')}` : ''}), ${s.cpus} CPUs, ${groupThousands(s.eventsTotal)} events` +
        (result.reused ? '' : ` in ${s.seconds.total.toFixed(2)} s (decode ${fmtRate(rate)} events/s)`) +
        `\n  lost events: ${s.lostEvents} (${s.lostEventNotices} notices), skipped inputs: ${s.skippedInputs}, unparsed events: ${s.unparsedEvents}` +
        `\n  database: ${result.dbPath}\n`,
    );
    for (const p of s.firstSkipped.slice(0, 5)) {
      process.stderr.write(`  skipped ${p.unit} ${p.where}: ${p.reason}: ${p.excerpt.slice(0, 80)}\n`);
    }
    process.stdout.write(`${result.id}\n`);
  });

cli
  .command('info <file>', 'Facts about a trace (ingests it first if needed)')
  .option('--json', '[boolean] print JSON')
  .action(async (file: string, opts: GlobalOptions & { json?: boolean }) => {
    const { ingestFile } = await import('./ingest/ingest_file.ts');
    const { summary: s } = await ingestFile(file, { dataDir: opts.dataDir });
    const info = {
      format: s.format,
      format_version: s.formatVersion,
      compression: s.compression,
      cpus: s.cpus,
      events_total: s.eventsTotal,
      events_by_name: s.eventsByName,
      first_ts_ns: s.firstTsNs === null ? null : BigInt(s.firstTsNs),
      last_ts_ns: s.lastTsNs === null ? null : BigInt(s.lastTsNs),
      lost_events: s.lostEvents,
      unparsed_lines: s.skippedInputs,
      unparsed_events: s.unparsedEvents,
      out_of_order_lines: s.outOfOrderLines,
      skipped: s.firstSkipped,
      // A compressed file whose decompression failed part-way: where and why (the rest is missing).
      cut_off: s.cutOff ?? null,
      meta: s.meta,
      id: s.id,
      model_version: s.modelVersion ?? 0,
    };
    const { toJson } = await import('./engine/engine.ts');
    if (opts.json) {
      process.stdout.write(`${toJson(info, 2)}\n`);
      return;
    }
    process.stdout.write(
      `${s.name}\n  format ${s.format} ${s.formatVersion ?? ''}\n  cpus ${s.cpus}\n  events ${s.eventsTotal}\n` +
        `  from ${s.firstTsNs} to ${s.lastTsNs} ns\n  lost ${s.lostEvents}, skipped ${s.skippedInputs}, unparsed ${s.unparsedEvents}\n` +
        Object.entries(s.eventsByName)
          .sort((a, b) => b[1] - a[1])
          .map(([n, c]) => `  ${String(c).padStart(10)} ${n}\n`)
          .join(''),
    );
  });

cli
  .command('analyze <file>', 'Run the detectors over a trace (ingests it first if needed)')
  .option('--json', '[boolean] print {trace, overview, findings, summaries, metrics, detectors} as JSON')
  .option('--sort <order>', '[impact|time] findings worst first (default) or in time order')
  .option('--top <n>', '[number] only the first N findings (in --sort order)')
  .option('--detector <id>', '[string, repeatable] run only these detectors')
  .option(
    '--param <id.name=value>',
    '[string, repeatable] override a detector parameter, e.g. shrinker_blocking.warn_ms=5',
  )
  .option('--queries <dir>', '[string, repeatable] also run the .sql detectors in this directory')
  .option('--no-saved', '[boolean] skip the detectors saved from the query page (<data-dir>/detectors)')
  .option('--fail-on <severity>', '[warn|critical] exit with status 2 if a finding has at least this severity')
  .action(
    async (
      file: string,
      opts: GlobalOptions & {
        json?: boolean;
        detector?: string | string[];
        param?: string | string[];
        queries?: string | string[];
        saved?: boolean;
        failOn?: string;
        sort?: string;
        top?: string | number;
      },
    ) => {
      if (opts.failOn && opts.failOn !== 'warn' && opts.failOn !== 'critical') {
        throw new UsageError(`--fail-on must be warn or critical, not ${opts.failOn}`);
      }
      const sort = opts.sort ?? 'impact';
      if (sort !== 'impact' && sort !== 'time') throw new UsageError(`--sort must be impact or time, not ${opts.sort}`);
      const top = opts.top === undefined ? undefined : Number(opts.top);
      if (top !== undefined && (!Number.isInteger(top) || top < 1))
        throw new UsageError(`--top wants a positive integer, got ${opts.top}`);
      const params: Record<string, string> = {};
      for (const p of list(opts.param)) {
        const eq = p.indexOf('=');
        if (eq <= 0 || !p.slice(0, eq).includes('.')) throw new UsageError(`--param wants id.name=value, got ${p}`);
        params[p.slice(0, eq)] = p.slice(eq + 1);
      }
      const { ingestFile } = await import('./ingest/ingest_file.ts');
      const { openDuckDb, toJson } = await import('./engine/engine.ts');
      const { runDetectors } = await import('./findings/run_detectors.ts');
      const { summary, dbPath } = await ingestFile(file, {
        dataDir: opts.dataDir,
        onProgress: process.stderr.isTTY ? progressPrinter().update : undefined,
      });
      // User SQL runs here (--queries, saved detectors): no file or URL access besides the model.
      const engine = await openDuckDb(dbPath, { readOnly: true, noExternalAccess: true });
      try {
        const result = await runDetectors(engine, {
          detectors: list(opts.detector).length ? list(opts.detector) : undefined,
          params,
          extraDirs: [...list(opts.queries), ...(opts.saved === false ? [] : await savedDetectorDirs(opts.dataDir))],
        });
        if (opts.json) {
          const { compareByTime, findingToJson } = await import('./findings/finding.ts');
          const trace = {
            id: summary.id,
            name: summary.name,
            format: summary.format,
            format_version: summary.formatVersion,
            cpus: summary.cpus,
            events_total: summary.eventsTotal,
            first_ts_ns: summary.firstTsNs === null ? null : BigInt(summary.firstTsNs),
            last_ts_ns: summary.lastTsNs === null ? null : BigInt(summary.lastTsNs),
          };
          // Ranked already; --top keeps the first N findings that no other finding covers.
          let findings = sort === 'time' ? [...result.findings].sort(compareByTime) : result.findings;
          if (top !== undefined) findings = findings.filter((f) => f.parent_id === null).slice(0, top);
          process.stdout.write(
            `${toJson({ trace, overview: result.overview, findings: findings.map(findingToJson), summaries: result.summaries, metrics: result.metrics, detectors: result.detectors }, 2)}\n`,
          );
        } else {
          const { formatReport } = await import('./findings/format_report.ts');
          process.stdout.write(formatReport(result, summary, { sort, top }));
        }
        if (opts.failOn) {
          const gate = opts.failOn === 'warn' ? ['warn', 'critical'] : ['critical'];
          const hits = result.findings.filter((f) => gate.includes(f.severity)).length;
          if (hits > 0) {
            process.stderr.write(`stallscope: ${hits} finding(s) at or above ${opts.failOn}\n`);
            process.exitCode = 2;
          }
        }
      } finally {
        engine.close();
      }
    },
  );

cli
  .command(
    'compare [...files]',
    'Compare traces: A B [C...] (A the baseline), or sets of iterations --a a1 a2 --b b1 b2',
  )
  .allowUnknownOptions()
  .option('--json', '[boolean] print the comparison as JSON (server/compare/COMPARE.md)')
  .option(
    '--fail-on-regression <pct>',
    '[number] exit with status 2 if a metric got significantly worse by more than PCT percent',
  )
  .option('--alpha <p>', '[number] significance level (default 0.05)')
  .option('--labels <a,b>', '[string] names of the sides, comma separated')
  .option('--metric <regex>', '[string] only metrics whose id matches')
  .option('--no-histograms', '[boolean] the table only, no log2 histograms')
  .option(
    '--top <n>',
    '[number] per-key histograms for the N keys with the most total time, the rest summed as (others) (default 10)',
  )
  .option(
    '--series',
    '[boolean] also the time series: peak, when, mean per trace (all points in --json as time_series)',
  )
  .option(
    '--align <event>',
    "[string] the series' times from each trace's first EVENT (name or system:name; implies --series)",
  )
  .action(async (_files: string[], opts: GlobalOptions) => {
    const { runCompare } = await import('./compare/compare_cli.ts');
    const at = process.argv.indexOf('compare');
    process.exitCode = await runCompare(process.argv.slice(at + 1), opts.dataDir);
  });

cli
  .command('export <file>', 'Write a trace with its findings and notes in another format (ingests it first if needed)')
  .option(
    '--format <format>',
    '[perfetto|notes] perfetto (a Perfetto trace for ui.perfetto.dev and trace_processor), notes (the notes file, <name>.stallscope-notes.json)',
  )
  .option('-o, --output <path>', '[string] the file to write (notes: default <name>.stallscope-notes.json here)')
  .action(async (file: string, opts: GlobalOptions & { format?: string; output?: string }) => {
    if (opts.format === 'notes') {
      const { exportNotesFile } = await import('./notes/notes_file_cli.ts');
      const r = await exportNotesFile(file, { dataDir: opts.dataDir, output: opts.output });
      process.stderr.write(`${r.path}: ${r.notes} note${r.notes === 1 ? '' : 's'} of ${r.name}\n`);
      return;
    }
    if (opts.format !== 'perfetto')
      throw new UsageError(`--format must be perfetto or notes${opts.format ? `, not ${opts.format}` : ''}`);
    if (!opts.output) throw new UsageError('-o <path> names the file to write');
    const { ingestFile } = await import('./ingest/ingest_file.ts');
    const { openDuckDb } = await import('./engine/engine.ts');
    const { runDetectors } = await import('./findings/run_detectors.ts');
    const { exportPerfettoToStream } = await import('./export/perfetto/export_perfetto.ts');
    const { NotesStore } = await import('./notes/notes_store.ts');
    const { resolveDataDir } = await import('./ingest/data_dir.ts');
    const { createWriteStream } = await import('node:fs');
    const { finished } = await import('node:stream/promises');
    const path = await import('node:path');
    const { summary, dbPath } = await ingestFile(file, {
      dataDir: opts.dataDir,
      onProgress: process.stderr.isTTY ? progressPrinter().update : undefined,
    });
    const engine = await openDuckDb(dbPath, { readOnly: true });
    try {
      const { findings } = await runDetectors(engine, {});
      const notes = await new NotesStore(path.join(resolveDataDir(opts.dataDir), 'notes')).list(summary.id);
      const file = createWriteStream(opts.output);
      const out = await exportPerfettoToStream(file, {
        query: (sql) => engine.query(sql),
        queryColumns: (sql) => engine.queryColumns(sql),
        findings,
        notes,
      });
      await finished(file);
      process.stderr.write(
        `${opts.output}: ${out.events} events (${out.typed} typed, ${out.generic} generic), ${out.findings} findings, ${notes.length} notes, ${out.bytes} bytes\n`,
      );
    } finally {
      engine.close();
    }
  });

cli
  .command(
    'query <file> [sql]',
    'Run SQL on a trace (ingests it first if needed), in the same sandbox as the query page',
  )
  .option('-f, --file <sqlFile>', '[string] read the SQL from this file')
  .option('--format <format>', '[table|csv|json] output format (default table)', { default: 'table' })
  .option('--timeout <seconds>', '[number] cancel the query after this many seconds (default 30)')
  .option('--max-rows <n>', '[number] print at most this many rows (default 1000000)')
  .action(
    async (
      file: string,
      sqlArg: string | undefined,
      opts: GlobalOptions & { file?: string; format: string; timeout?: number; maxRows?: number },
    ) => {
      if (!['table', 'csv', 'json'].includes(opts.format))
        throw new UsageError(`--format must be table, csv or json, not ${opts.format}`);
      if ((sqlArg === undefined) === (opts.file === undefined))
        throw new UsageError('give the SQL as an argument or with -f FILE (one of them)');
      const { readFile } = await import('node:fs/promises');
      const sql = opts.file !== undefined ? await readFile(String(opts.file), 'utf8') : String(sqlArg);
      const timeoutS = opts.timeout === undefined ? 30 : Number(opts.timeout);
      if (!(timeoutS > 0)) throw new UsageError('--timeout must be a number of seconds above 0');
      const maxRows = opts.maxRows === undefined ? 1_000_000 : Number(opts.maxRows);
      if (!Number.isInteger(maxRows) || maxRows < 0) throw new UsageError('--max-rows must be a whole number');
      const { ingestFile } = await import('./ingest/ingest_file.ts');
      const { QuerySandbox, QueryError } = await import('./query/sandbox.ts');
      const { formatResult } = await import('./query/format_result.ts');
      const { dbPath } = await ingestFile(file, {
        dataDir: opts.dataDir,
        onProgress: process.stderr.isTTY ? progressPrinter().update : undefined,
      });
      const sandbox = await QuerySandbox.open(dbPath);
      try {
        const r = await sandbox.run(sql, { timeoutMs: Math.round(timeoutS * 1000), maxRows });
        process.stdout.write(formatResult(r, opts.format as 'table' | 'csv' | 'json'));
        if (r.truncated)
          process.stderr.write(`stallscope: only the first ${r.rowCount} rows are printed (--max-rows)\n`);
      } catch (e) {
        if (e instanceof QueryError) {
          const where = e.line !== null ? ` (line ${e.line}, column ${e.column})` : '';
          throw new UsageError(`query: ${e.message}${where}`);
        }
        throw e;
      } finally {
        sandbox.close();
      }
    },
  );

cli
  .command(
    'excerpt <file> <sel>',
    'Print a finding, an event or a time range as text for a review mail (ingests the file first if needed)',
  )
  .option('--max <lines>', '[number] at most this many event lines (default 200)')
  .option('--public-url <url>', '[string] the server address share links should name (default http://127.0.0.1:7420)')
  .example('stallscope excerpt trace.dat finding:183405219980422')
  .example('stallscope excerpt trace.dat event:1234')
  .example(
    'stallscope excerpt trace.dat 5201.2s-5201.5s      # absolute trace time; or t0=<ns>,t1=<ns> from the first event',
  )
  .action(async (file: string, sel: string, opts: GlobalOptions & { max?: string | number; publicUrl?: string }) => {
    const max = opts.max === undefined ? 200 : Number(opts.max);
    if (!Number.isInteger(max) || max < 1) throw new UsageError(`--max wants a positive integer, got ${opts.max}`);
    const { excerptForFile } = await import('./notes/excerpt_cli.ts');
    process.stdout.write(
      await excerptForFile(file, sel, { dataDir: opts.dataDir, maxLines: max, publicUrl: opts.publicUrl }),
    );
  });

cli
  .command(
    'import-notes <file> <notes>',
    "Add the notes of a notes file (.stallscope-notes.json) to a trace's notes, merged by note id (ingests the trace first if needed)",
  )
  .action(async (file: string, notes: string, opts: GlobalOptions) => {
    const { importNotesFile } = await import('./notes/notes_file_cli.ts');
    const r = await importNotesFile(file, notes, { dataDir: opts.dataDir });
    if (!r.ok) throw new UsageError(`${notes}: ${r.error}`);
    const a = r.answer;
    process.stderr.write(`${notes}: ${a.added} note${a.added === 1 ? '' : 's'} added, ${a.existing} already there\n`);
    for (const x of a.reanchored) process.stderr.write(`  note ${x.id}: ${x.reason}\n`);
    for (const x of a.skipped) process.stderr.write(`  note ${x.id} skipped: ${x.reason}\n`);
  });

cli
  .command('detectors', 'List the detectors and their parameters')
  .option('--queries <dir>', '[string, repeatable] also list the .sql detectors in this directory')
  .option('--json', '[boolean] print JSON')
  .action(async (opts: GlobalOptions & { queries?: string | string[]; json?: boolean }) => {
    const { listDetectors } = await import('./findings/detector_registry.ts');
    const detectors = await listDetectors([...list(opts.queries), ...(await savedDetectorDirs(opts.dataDir))]);
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(detectors, null, 2)}\n`);
      return;
    }
    for (const d of detectors) {
      process.stdout.write(`${d.id}  ${d.title}\n`);
      if (d.requires.length) process.stdout.write(`    needs: ${d.requires.join(' ')}\n`);
      if (d.impact) process.stdout.write(`    impact: ${d.impact}\n`);
      if (d.severity_rule) process.stdout.write(`    severity: ${d.severity_rule}\n`);
      if (d.rank === 'loss') process.stdout.write(`    rank: loss (before every other finding of its severity)\n`);
      for (const p of d.params)
        process.stdout.write(`    --param ${d.id}.${p.name}=${p.default}  ${p.description ?? ''}\n`);
    }
  });

cli
  .command(
    'batch [...inputs]',
    'Analyse many traces (FILE, DIR, @LIST) in parallel processes into one Parquet dataset (server/fleet/DATASET.md)',
  )
  .option('--out <dir>', '[string] the dataset directory (required); a rerun there skips traces already analysed')
  .option('--labels <csv>', '[string] labels.csv: file,<label>,<label>... (e.g. file,kernel,config,host,iteration)')
  .option('--jobs <n>', '[number] child processes at once (default: the CPUs)')
  .option('--queries <dir>', '[string, repeatable] also run the .sql detectors in this directory')
  .action(
    async (
      inputs: string[],
      opts: GlobalOptions & { out?: string; labels?: string; jobs?: string | number; queries?: string | string[] },
    ) => {
      if (!opts.out) throw new UsageError('batch needs --out DIR');
      if (inputs.length === 0) throw new UsageError('batch needs at least one FILE, DIR or @LIST');
      const jobs = opts.jobs === undefined ? undefined : Number(opts.jobs);
      if (jobs !== undefined && (!Number.isInteger(jobs) || jobs < 1))
        throw new UsageError(`--jobs wants a positive integer, got ${opts.jobs}`);
      const { runBatch } = await import('./fleet/batch.ts');
      await runBatch(inputs, {
        out: opts.out,
        labels: opts.labels,
        jobs,
        dataDir: opts.dataDir,
        queries: list(opts.queries),
      });
    },
  );

cli
  .command(
    'fleet [...inputs]',
    'The same as batch on Apache Spark (PySpark): --master local[2] or a cluster URL; inputs may also be URIs (s3://, hdfs://, file://) read on the executors (fleet/spark/README.md)',
  )
  .option('--out <dir>', '[string] the dataset directory (required)')
  .option('--master <url>', '[string] Spark master (default local[2])')
  .option('--labels <csv>', '[string] labels.csv, as for batch')
  .option(
    '--python <path>',
    '[string] the Python with pyspark (default: $STALLSCOPE_SPARK_PYTHON, else ~/.cache/stallscope/spark-venv/bin/python)',
  )
  .action(
    async (
      inputs: string[],
      opts: GlobalOptions & { out?: string; master?: string; labels?: string; python?: string },
    ) => {
      if (!opts.out) throw new UsageError('fleet needs --out DIR');
      if (inputs.length === 0) throw new UsageError('fleet needs at least one FILE, DIR, URI or @LIST');
      const { runFleet } = await import('./fleet/spark.ts');
      process.exitCode = await runFleet(inputs, {
        out: opts.out,
        master: opts.master ?? 'local[2]',
        labels: opts.labels,
        python: opts.python,
      });
    },
  );

cli
  .command(
    'fleet-report <dataset>',
    'Fleet questions over a dataset: metrics per label against a baseline label, top shrinkers / tasks / detectors',
  )
  .option('--by <label>', '[string] the label that names the settings (default kernel)', { default: 'kernel' })
  .option('--baseline <value>', '[string] the baseline setting (default: the first in sorted order)')
  .option('--alpha <p>', '[number] significance level (default 0.05)')
  .option('--metric <regex>', '[string] only metrics whose id matches')
  .option('--top <n>', '[number] rows of each top list (default 10)')
  .option('--json', '[boolean] print JSON')
  .option(
    '--fail-on-regression <pct>',
    '[number] exit with status 2 if a metric got significantly worse by more than PCT percent in a setting',
  )
  .action(
    async (
      dataset: string,
      opts: {
        by: string;
        baseline?: string;
        alpha?: string | number;
        metric?: string;
        top?: string | number;
        json?: boolean;
        failOnRegression?: string | number;
      },
    ) => {
      const { runFleetReport } = await import('./fleet/report.ts');
      process.exitCode = await runFleetReport(dataset, {
        by: String(opts.by),
        baseline: opts.baseline === undefined ? undefined : String(opts.baseline),
        alpha: opts.alpha === undefined ? 0.05 : Number(opts.alpha),
        metric: opts.metric,
        top: opts.top === undefined ? 10 : Number(opts.top),
        json: Boolean(opts.json),
        failOnRegressionPct: opts.failOnRegression === undefined ? null : Number(opts.failOnRegression),
      });
    },
  );

cli
  .command(
    'fleet-task <file>',
    'One trace of a fleet run: the analysis of analyze --json as dataset rows, NDJSON on stdout (run by batch and the Spark job)',
  )
  .option('--queries <dir>', '[string, repeatable] also run the .sql detectors in this directory')
  .action(async (file: string, opts: GlobalOptions & { queries?: string | string[] }) => {
    const { traceRows, linesToNdjson } = await import('./fleet/trace_rows.ts');
    process.stdout.write(linesToNdjson(await traceRows(file, { dataDir: opts.dataDir, queries: list(opts.queries) })));
  });

cli
  .command('serve', 'Serve the web app on localhost')
  .option('--port <port>', '[number] port (default 7420)', { default: 7420 })
  .option('--host <host>', '[string] address to listen on (default 127.0.0.1)', { default: '127.0.0.1' })
  .option('--sample', '[boolean] add the bundled sample trace to the library')
  .option('--token <token>', '[string] require this access token (or $STALLSCOPE_TOKEN)')
  .option('--max-upload <bytes>', '[number] upload size cap in bytes (default 16 GiB)')
  .option(
    '--public-url <url>',
    '[string] the URL users reach this server at (links are written with it; its host is allowed)',
  )
  .option('--allow-host <name>', "[string] also answer to this Host name (repeatable; a team server's DNS names)")
  .option(
    '--desktop',
    '[boolean] serve one desktop window: token on stdin, address on stdout, exits when stdin ends (desktop/)',
  )
  .option(
    '--fleet <dir>',
    '[string] offer this fleet dataset (batch/fleet --out DIR) in the app at /?fleet=NAME (repeatable)',
  )
  .action(
    async (
      opts: GlobalOptions & {
        port: number;
        host: string;
        sample?: boolean;
        token?: string;
        maxUpload?: number;
        publicUrl?: string;
        allowHost?: string | string[];
        desktop?: boolean;
        fleet?: string | string[];
      },
    ) => {
      const { serve } = await import('./serve.ts');
      if (opts.desktop && opts.token) throw new UsageError('serve --desktop reads its token from stdin, not --token');
      await serve({
        dataDir: opts.dataDir,
        port: Number(opts.port),
        host: opts.host,
        sample: opts.sample,
        token: opts.token,
        maxUploadBytes: opts.maxUpload ? Number(opts.maxUpload) : undefined,
        publicUrl: opts.publicUrl,
        allowHosts: list(opts.allowHost),
        desktop: opts.desktop,
        fleets: list(opts.fleet),
      });
    },
  );

cli
  .command(
    'open <file-or-link> [file]',
    'Ingest a trace, serve the app and open the browser on it; or open a share link (with FILE, the trace it needs) here',
  )
  .option('--port <port>', '[number] port (default 7420)', { default: 7420 })
  .option('--no-browser', '[boolean] only print the URL')
  .action(
    async (target: string, file: string | undefined, opts: GlobalOptions & { port: number; browser?: boolean }) => {
      const { serve } = await import('./serve.ts');
      const { looksLikeLink, readSharedLink, describeNeeded, sha256OfFile, LinkError } =
        await import('./notes/open_link.ts');
      if (!looksLikeLink(target)) {
        if (file !== undefined)
          throw new UsageError(`open takes one trace file, or a link and a file (got ${target} and ${file})`);
        await serve({
          dataDir: opts.dataDir,
          port: Number(opts.port),
          host: '127.0.0.1',
          openFile: target,
          openBrowser: opts.browser !== false,
        });
        return;
      }
      let link;
      try {
        link = await readSharedLink(target);
      } catch (e) {
        if (e instanceof LinkError) throw new UsageError(e.message);
        throw e;
      }
      process.stderr.write(
        `stallscope: the link needs ${describeNeeded(link)}${link.notes ? `; it carries ${link.notes} note${link.notes === 1 ? '' : 's'}` : ''}\n`,
      );
      if (link.problem) process.stderr.write(`stallscope: ${link.problem}\n`);
      if (file !== undefined) {
        // Checked before anything is ingested: a wrong file never enters the library.
        const sha = await sha256OfFile(file);
        if (sha !== link.trace) {
          throw new UsageError(
            `${file} is not the trace this link needs: its sha256 is ${sha}, the link's trace has sha256 ${link.trace}${link.facts ? ` (${link.facts.name}, ${link.facts.size.toLocaleString('en')} bytes)` : ''}`,
          );
        }
      }
      await serve({
        dataDir: opts.dataDir,
        port: Number(opts.port),
        host: '127.0.0.1',
        openFile: file,
        openBrowser: opts.browser !== false,
        openLink: { trace: link.trace, search: link.search, hash: link.hash },
      });
    },
  );

cli.help();
cli.version('0.1.0');

class UsageError extends Error {}

/** The data directory's saved detectors (the query page's "Save as detector"), if there are any. */
async function savedDetectorDirs(dataDir: string | undefined): Promise<string[]> {
  const { resolveDataDir } = await import('./ingest/data_dir.ts');
  const { userDetectorDir } = await import('./query/user_detectors.ts');
  const { readdir } = await import('node:fs/promises');
  const dir = userDetectorDir(resolveDataDir(dataDir));
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.some((n) => n.endsWith('.sql')) ? [dir] : [];
}

function list(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

/**
 * 1,000,002: an integer with its thousands grouped, as toLocaleString('en')
 * prints it, without Intl. The first toLocaleString of a process loads ICU's
 * number formatting, 50-60 ms of the main thread (node 20, this VM), which
 * fell in the middle of the ingest's decode phase with the first progress line.
 */
function groupThousands(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+$)/g, ',');
}

function fmtRate(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : n.toFixed(0);
}

/** Progress on stderr: phase, bytes, events/s and ETA; redraws in place on a terminal. */
function progressPrinter() {
  const started = performance.now();
  let last = 0;
  let lastLine = '';
  const tty = process.stderr.isTTY;
  return {
    update(p: IngestProgress) {
      const now = performance.now();
      if (now - last < (tty ? 200 : 2000) && p.phase !== 'done') return;
      last = now;
      const secs = (now - started) / 1000;
      const mb = p.bytesDone / 1e6;
      const pct = p.bytesTotal ? ` ${((100 * p.bytesDone) / p.bytesTotal).toFixed(1)}%` : '';
      const eta =
        p.bytesTotal && p.bytesDone > 0 && p.phase === 'decoding'
          ? ` ETA ${Math.max(0, (secs * (p.bytesTotal - p.bytesDone)) / p.bytesDone).toFixed(0)} s`
          : '';
      lastLine = `${p.phase}: ${mb.toFixed(1)} MB${p.bytesTotal ? ` / ${(p.bytesTotal / 1e6).toFixed(1)} MB` : ''}${pct}, ${groupThousands(p.events)} events (${fmtRate(p.events / Math.max(secs, 1e-3))}/s)${eta}`;
      process.stderr.write(tty ? `\r\x1b[K${lastLine}` : `${lastLine}\n`);
    },
    end() {
      if (tty && lastLine) process.stderr.write('\n');
    },
  };
}

async function main(): Promise<void> {
  try {
    cli.parse(process.argv, { run: false });
    if (!cli.matchedCommand) {
      if (cli.options.help || cli.options.version) return;
      if (cli.args.length > 0) throw new UsageError(`unknown command: ${cli.args[0]} (see stallscope --help)`);
      cli.outputHelp();
      return;
    }
    await cli.runMatchedCommand();
  } catch (err) {
    // IngestError by name: ingest_file.ts is imported lazily, for a fast start.
    if (
      err instanceof DecodeError ||
      err instanceof UsageError ||
      ['IngestError', 'ExcerptError', 'CompareUsageError', 'FleetError'].includes((err as Error | null)?.name ?? '')
    ) {
      process.stderr.write(`stallscope: ${(err as Error).message}\n`);
    } else {
      process.stderr.write(`stallscope: ${(err as Error).stack ?? err}\n`);
    }
    process.exitCode = 1;
  }
}

await main();
