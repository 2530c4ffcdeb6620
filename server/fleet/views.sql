-- Fleet questions over a stallscope fleet dataset (DATASET.md), as views.
--
-- The same text runs in DuckDB (server/fleet/report.ts, after `CREATE MACRO
-- percentile(x, p) AS quantile_cont(x, p)`) and in Spark SQL
-- (fleet/spark/views.py): both engines have `percentile(x, p)` as exact
-- linear interpolation between closest ranks. Each statement ends with ';'
-- on its own line's end; no other ';' appears.

-- One row per (trace, label): the label's name and value beside the trace.
CREATE OR REPLACE TEMPORARY VIEW trace_label AS
SELECT t.trace_id, t.file, t.name AS trace_name, l.name AS label, l.value
FROM traces t JOIN labels l ON l.trace_id = t.trace_id;

-- Metrics per label value across traces: how many traces have the metric,
-- its mean, median, p90, min and max over them (one value per trace).
CREATE OR REPLACE TEMPORARY VIEW label_metric AS
SELECT tl.label, tl.value AS setting, m.detector, m.metric, m.scope, m.key, m.unit, m.better,
       count(*) AS traces, avg(m.value) AS mean,
       percentile(m.value, 0.5) AS p50, percentile(m.value, 0.9) AS p90,
       min(m.value) AS min, max(m.value) AS max
FROM metrics m JOIN trace_label tl ON tl.trace_id = m.trace_id
GROUP BY tl.label, tl.value, m.detector, m.metric, m.scope, m.key, m.unit, m.better;

-- Shrinkers by the time callers spent in them across the fleet.
CREATE OR REPLACE TEMPORARY VIEW top_shrinker AS
SELECT m.key AS shrinker, count(DISTINCT m.trace_id) AS traces,
       sum(CASE WHEN m.metric = 'shrinker.blocked_ns' THEN m.value END) AS blocked_ns,
       max(CASE WHEN m.metric = 'shrinker.call_max_ns' THEN m.value END) AS worst_call_ns,
       sum(CASE WHEN m.metric = 'shrinker.calls' THEN m.value END) AS calls
FROM metrics m
WHERE m.scope = 'shrinker' AND m.metric IN ('shrinker.blocked_ns', 'shrinker.call_max_ns', 'shrinker.calls')
GROUP BY m.key;

-- Tasks (by comm) by the impact of their top-level findings across the fleet.
CREATE OR REPLACE TEMPORARY VIEW top_task AS
SELECT f.comm AS task, count(*) AS findings, count(DISTINCT f.trace_id) AS traces,
       sum(f.impact_ns) AS impact_ns, max(f.impact_ns) AS worst_ns,
       sum(CASE WHEN f.severity = 'critical' THEN 1 ELSE 0 END) AS critical
FROM findings f
WHERE f.parent_id IS NULL AND f.comm IS NOT NULL
GROUP BY f.comm;

-- Detectors by the impact of their top-level findings across the fleet.
CREATE OR REPLACE TEMPORARY VIEW top_detector AS
SELECT f.detector, count(*) AS findings, count(DISTINCT f.trace_id) AS traces,
       sum(f.impact_ns) AS impact_ns, max(f.impact_ns) AS worst_ns,
       sum(CASE WHEN f.severity = 'critical' THEN 1 ELSE 0 END) AS critical
FROM findings f
WHERE f.parent_id IS NULL
GROUP BY f.detector;

-- Traces by the impact of their top-level findings: the worst first.
CREATE OR REPLACE TEMPORARY VIEW worst_trace AS
SELECT t.trace_id, t.file, t.name, t.labels, count(f.trace_id) AS findings,
       coalesce(sum(f.impact_ns), 0) AS impact_ns,
       coalesce(sum(CASE WHEN f.severity = 'critical' THEN 1 ELSE 0 END), 0) AS critical
FROM traces t LEFT JOIN findings f ON f.trace_id = t.trace_id AND f.parent_id IS NULL
GROUP BY t.trace_id, t.file, t.name, t.labels;
