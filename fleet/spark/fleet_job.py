"""stallscope fleet on Apache Spark: the batch dataset, with Spark as the scheduler and writer.

Run by `stallscope fleet INPUT... --out DIR --master URL` (server/fleet/spark.ts), or directly:

    spark-venv/bin/python fleet/spark/fleet_job.py --out DIR --master local[2] \
        --cli /path/to/stallscope/bin/stallscope.mjs --node /usr/bin/node [--labels labels.csv] INPUT...

Two stages:
  1. hash: one task per input computes the sha256 of its bytes (the trace id);
     the driver keeps one input per content (the first path in sorted order),
     as batch does.
  2. analyse: one task per trace runs `node stallscope.mjs fleet-task FILE`
     (server/fleet/trace_rows.ts: the analysis of `stallscope analyze --json`,
     as rows) with its own temporary data directory, and returns the rows.
     A trace that cannot be analysed returns one failures row; a task that
     crashes is retried by Spark (spark.task.maxFailures; local[N,F] in local
     mode) and, if it keeps crashing, gives a failures row too.
Spark then writes every table of server/fleet/schema.json as Parquet, sorted
in the canonical order of server/fleet/dataset.ts, so the dataset equals
batch's row for row (tests/fleet/fleet.test.ts).

Executors need: Node >= 20 and the stallscope package at the --cli path (the
same path on every node, e.g. installed by the cluster's bootstrap), and read
access to the inputs. Local paths need only the Python standard library;
inputs given as URIs (s3://, hdfs://, gs://, file://) are read through
pyarrow's filesystems on the executors: each task copies its trace to a local
temporary file, analyses that, and removes it (see README.md: what S3 and
HDFS need on the executors).
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SIDE_FILE_SUFFIXES = ('.json', '.md', '.csv', '.sh', '.py', '.ts', '.list')
CANONICAL_ORDER = {
    'traces': ['file'],
    'labels': ['trace_id', 'name'],
    'detectors': ['trace_id', 'detector'],
    'findings': ['trace_id', 'rank'],
    'metrics': ['trace_id', 'detector', 'metric', 'scope', 'key'],
    'failures': ['file'],
}
FROM_INPUT = {'traces': ['file', 'labels'], 'failures': ['file', 'trace_id']}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def walk(d):
    out = []
    for name in sorted(os.listdir(d)):
        if name.startswith('.'):
            continue
        p = os.path.join(d, name)
        if os.path.isdir(p):
            out.extend(walk(p))
        elif os.path.isfile(p) and not name.lower().endswith(SIDE_FILE_SUFFIXES):
            out.append(p)
    return out


# An input with a scheme (s3://bucket/key, hdfs://namenode:8020/dir, file:///x) is read
# through pyarrow's filesystems rather than open(): the Hadoop-style stores a fleet keeps
# its traces in. A plain path stays a plain path.
URI = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*://')


def is_uri(p):
    return bool(URI.match(p))


def uri_filesystem(uri):
    """(pyarrow filesystem, its path for uri, the prefix that turns such a path back into a URI)."""
    from pyarrow import fs as pafs

    filesystem, path = pafs.FileSystem.from_uri(uri)
    bare = uri.rstrip('/')
    tail = path.rstrip('/')
    prefix = bare[: len(bare) - len(tail)] if tail and bare.endswith(tail) else uri.split('://', 1)[0] + '://'
    return filesystem, path, prefix


def walk_uri(uri):
    """Every trace below a directory URI (hidden and side files left out, as walk does), or the URI itself."""
    from pyarrow import fs as pafs

    filesystem, path, prefix = uri_filesystem(uri)
    info = filesystem.get_file_info(path)
    if info.type != pafs.FileType.Directory:
        return [uri]  # a file, or missing: then a failures row, as a missing local path
    out = []
    root = path.rstrip('/')
    for entry in filesystem.get_file_info(pafs.FileSelector(path, recursive=True)):
        rel = entry.path[len(root) :].lstrip('/')
        if entry.type != pafs.FileType.File or any(part.startswith('.') for part in rel.split('/')):
            continue
        if entry.base_name.lower().endswith(SIDE_FILE_SUFFIXES):
            continue
        out.append(prefix + entry.path)
    return sorted(out)


def open_input(file):
    """A binary stream of an input: a local path, or a URI through pyarrow."""
    if is_uri(file):
        filesystem, path, _ = uri_filesystem(file)
        return filesystem.open_input_stream(path)
    return open(file, 'rb')


def expand_inputs(args):
    """FILE, DIR (every trace below it), URI (a file or directory) or @LIST, as server/fleet/inputs.ts expands them."""
    out = []
    for a in args:
        if a.startswith('@'):
            with open(a[1:], encoding='utf-8') as f:
                out.extend(line.strip() for line in f if line.strip() and not line.strip().startswith('#'))
        elif is_uri(a):
            out.extend(walk_uri(a))
        elif os.path.isdir(a):
            out.extend(walk(a))
        else:
            out.append(a)
    return sorted(set(out))


def read_labels(path):
    labels = {}
    if not path:
        return labels
    with open(path, encoding='utf-8') as f:
        lines = [l.rstrip('\r\n') for l in f if l.strip() and not l.startswith('#')]
    head = [c.strip() for c in lines[0].split(',')]
    if head[0] != 'file':
        raise SystemExit(f'{path}: line 1: the first column must be "file", got {head[0]}')
    for line in lines[1:]:
        cells = [c.strip() for c in line.split(',')]
        labels[cells[0]] = {name: cells[i + 1] for i, name in enumerate(head[1:]) if i + 1 < len(cells) and cells[i + 1]}
    return labels


def labels_for(labels, file):
    for k in (file, os.path.abspath(file), os.path.basename(file)):
        if k in labels:
            return labels[k]
    return {}


def labels_json(labels):
    return json.dumps(labels, sort_keys=True, separators=(',', ':'), ensure_ascii=False)


def sha256_file(path):
    h = hashlib.sha256()
    with open_input(path) as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def hash_task(file):
    try:
        return (file, sha256_file(file), None)
    except OSError as e:  # pyarrow's errors (FileNotFoundError, PermissionError, ...) are OSErrors too
        # Node's wording for the same error (ENOENT: no such file or directory, open '...').
        return (file, None, f"{e.__class__.__name__}: {e}")


def local_copy(file, directory):
    """A URI's bytes in a local file under directory (the analysis reads a local path)."""
    name = file.rstrip('/').rsplit('/', 1)[-1] or 'trace'
    dest = os.path.join(directory, name)
    with open_input(file) as src, open(dest, 'wb') as out:
        shutil.copyfileobj(src, out, 1 << 20)
    return dest


def run_fleet_task(node, cli, file):
    """`stallscope fleet-task FILE` in a child process: its NDJSON lines, or one failures line."""
    data_dir = tempfile.mkdtemp(prefix='stallscope-fleet-')
    try:
        if is_uri(file):
            try:
                inputs = os.path.join(data_dir, 'input')
                os.makedirs(inputs)
                file = local_copy(file, inputs)
            except OSError as e:
                return [{'table': 'failures', 'row': {'stage': 'read', 'message': f"{e.__class__.__name__}: {e}"}}]
        p = subprocess.run([node, cli, '--data-dir', data_dir, 'fleet-task', file], capture_output=True)
        if p.returncode != 0:
            status = p.returncode if p.returncode >= 0 else 128
            stderr = p.stderr.decode('utf-8', 'replace').strip().split('\n')
            # Worded as server/fleet/batch.ts taskFailureMessage.
            message = f'stallscope fleet-task exited with status {status}: {stderr[-1] if stderr else ""}'
            return [{'table': 'failures', 'row': {'stage': 'task', 'message': message}}]
        return [json.loads(l) for l in p.stdout.decode('utf-8').split('\n') if l.strip()]
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def cast(value, kind):
    if value is None:
        return None
    if kind in ('long', 'int'):
        return int(value)
    if kind == 'double':
        return float(value)
    return value if isinstance(value, str) else json.dumps(value)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('inputs', nargs='+')
    ap.add_argument('--out', required=True)
    ap.add_argument('--master', default='local[2]')
    ap.add_argument('--labels')
    ap.add_argument('--cli', required=True, help='bin/stallscope.mjs, at the same path on every executor')
    ap.add_argument('--node', default='node')
    ap.add_argument('--schema', required=True, help='server/fleet/schema.json')
    args = ap.parse_args()

    from pyspark.sql import SparkSession
    from pyspark.sql.types import DoubleType, IntegerType, LongType, StringType, StructField, StructType

    with open(args.schema, encoding='utf-8') as f:
        schema = json.load(f)
    spark_type = {'string': StringType(), 'long': LongType(), 'int': IntegerType(), 'double': DoubleType()}

    spark = (
        SparkSession.builder.master(args.master)
        .appName('stallscope-fleet')
        .config('spark.ui.enabled', 'false')
        .config('spark.sql.shuffle.partitions', '4')
        .config('spark.driver.host', os.environ.get('SPARK_LOCAL_IP', '127.0.0.1'))
        .config('spark.python.worker.reuse', 'true')
        .config('spark.ui.showConsoleProgress', 'false')
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel('ERROR')
    sc = spark.sparkContext
    files = expand_inputs(args.inputs)
    labels = read_labels(args.labels)
    log(f'fleet: {len(files)} inputs on {args.master}')

    # Stage 1: content hashes; one input per content (the first path in sorted order).
    hashed = sc.parallelize(files, max(1, len(files))).map(hash_task).collect()
    units, failures_read, seen = [], [], set()
    for file, trace_id, err in sorted(hashed):
        if trace_id is None:
            failures_read.append((file, err))
        elif trace_id not in seen:
            seen.add(trace_id)
            units.append((file, trace_id))

    # Resume (as batch does, same files): a trace analysed by an earlier run (batch's or fleet's)
    # left <out>/.work/done/<sha256>.ndjson, its fleet-task lines; it is not analysed again.
    # Failures leave no done file, so every rerun retries them. The executors write the done
    # files: --out must be a path they share with the driver (it is where the tables go too).
    done_dir = os.path.join(os.path.abspath(args.out), '.work', 'done')
    os.makedirs(done_dir, exist_ok=True)
    reused, to_run = [], []
    for file, trace_id in units:
        path = os.path.join(done_dir, f'{trace_id}.ndjson')
        if os.path.exists(path):
            with open(path, encoding='utf-8') as f:
                reused.append((file, trace_id, [json.loads(l) for l in f if l.strip()]))
        else:
            to_run.append((file, trace_id))
    log(f'fleet: {len(reused)} already analysed, {len(to_run)} to analyse')

    # Stage 2: one task per trace runs the stallscope analysis there.
    node, cli = args.node, args.cli

    def analyse(unit):
        file, trace_id = unit
        log(f'fleet: analysing {file}')
        lines = run_fleet_task(node, cli, file)
        if not (len(lines) == 1 and lines[0]['table'] == 'failures'):
            tmp = os.path.join(done_dir, f'{trace_id}.ndjson.tmp-{os.getpid()}')
            with open(tmp, 'w', encoding='utf-8') as f:
                f.write(''.join(json.dumps(l, separators=(',', ':')) + '\n' for l in lines))
            os.replace(tmp, os.path.join(done_dir, f'{trace_id}.ndjson'))
        return (file, trace_id, lines)

    results = sc.parallelize(to_run, max(1, len(to_run))).map(analyse).union(sc.parallelize(reused, max(1, min(len(reused), 8))))
    lab = labels

    def to_rows(result):
        file, trace_id, lines = result
        lj = labels_for(lab, file)
        analysed = False
        for line in lines:
            table, row = line['table'], dict(line['row'])
            if table == 'traces':
                analysed = True
                row['file'], row['labels'] = file, labels_json(lj)
            elif table == 'failures':
                row['file'], row['trace_id'] = file, trace_id
            yield (table, row)
        if analysed:
            for name in sorted(lj):
                yield ('labels', {'trace_id': trace_id, 'name': name, 'value': lj[name]})

    rows = results.flatMap(to_rows).persist()
    extra_failures = sc.parallelize([('failures', {'file': f, 'trace_id': None, 'stage': 'read', 'message': m}) for f, m in failures_read], 1)
    rows = rows.union(extra_failures)

    for table, cols in schema['tables'].items():
        struct = StructType([StructField(c, spark_type[t], True) for c, t in cols])
        typed = rows.filter(lambda tr, table=table: tr[0] == table).map(
            lambda tr, cols=cols: tuple(cast(tr[1].get(c), t) for c, t in cols)
        )
        df = spark.createDataFrame(typed, struct)
        df.repartition(1).sortWithinPartitions(*CANONICAL_ORDER[table]).write.mode('overwrite').parquet(os.path.join(args.out, table))
    n_fail = rows.filter(lambda tr: tr[0] == 'failures').count()
    with open(os.path.join(args.out, 'dataset.json'), 'w', encoding='utf-8') as f:
        f.write(json.dumps({'format': schema['format'], 'schema_version': schema['schema_version'], 'writer': 'spark', 'tables': list(schema['tables'])}, indent=2) + '\n')
    log(f'fleet: wrote {args.out} ({len(units) + len(failures_read) - n_fail} traces, {n_fail} failures)')
    spark.stop()


if __name__ == '__main__':
    main()
