"""The fleet views (server/fleet/views.sql) in Spark SQL over a fleet dataset, and a query on them.

    spark-venv/bin/python fleet/spark/views.py DATASET "SELECT * FROM top_detector ORDER BY impact_ns DESC" ["SQL"...] [--master local[2]] [--json]

Registers each table of the dataset (its <table>/*.parquet) as a temporary
view, runs views.sql (the same text DuckDB runs in server/fleet/report.ts),
then each query; prints the rows as JSON lines ({"query": i, "row": {...}})
with --json, else a table per query. One Spark session for all of them.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VIEWS_SQL = os.path.join(HERE, '..', '..', 'server', 'fleet', 'views.sql')
TABLES = ('traces', 'labels', 'detectors', 'findings', 'metrics', 'failures')


def view_statements(path=VIEWS_SQL):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    out = []
    for stmt in re.split(r';\s*$', text, flags=re.M):
        stmt = re.sub(r'^\s*--.*$', '', stmt, flags=re.M).strip()
        if stmt:
            out.append(stmt)
    return out


def open_fleet(spark, dataset):
    for t in TABLES:
        spark.read.parquet(os.path.join(dataset, t)).createOrReplaceTempView(t)
    for stmt in view_statements():
        spark.sql(stmt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('dataset')
    ap.add_argument('queries', nargs='+')
    ap.add_argument('--master', default='local[2]')
    ap.add_argument('--json', action='store_true')
    args = ap.parse_args()
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(args.master).appName('stallscope-fleet-views')
        .config('spark.ui.enabled', 'false').config('spark.ui.showConsoleProgress', 'false')
        .config('spark.driver.host', os.environ.get('SPARK_LOCAL_IP', '127.0.0.1'))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel('ERROR')
    open_fleet(spark, args.dataset)
    for i, query in enumerate(args.queries):
        df = spark.sql(query)
        if args.json:
            for row in df.collect():
                sys.stdout.write(json.dumps({'query': i, 'row': row.asDict()}, default=str) + '\n')
        else:
            df.show(100, truncate=False)
    spark.stop()


if __name__ == '__main__':
    main()
