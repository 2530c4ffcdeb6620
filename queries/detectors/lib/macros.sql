-- stallscope detector library: small TEMP macros shared by the detector files
-- ===========================================================================
--
-- The detector runner (server/findings/run_detectors.ts) executes this file
-- on the connection before running any detector, so every detector, built-in
-- or user-supplied (`--queries DIR`), may call these macros. To run a
-- detector by hand in the duckdb shell: `.read queries/detectors/lib/macros.sql`,
-- then run the detector's SELECT with each `$param` replaced by a value
-- (its default is in the file's `@param` line).
--
-- All names start with `ss_` so they do not collide with DuckDB builtins.

-- Human duration from ns: '850 ns', '12.3 us', '412.5 ms', '2.35 s'.
-- ARG ns BIGINT  duration in ns. RETURNS VARCHAR ('?' for NULL).
CREATE OR REPLACE TEMP MACRO ss_fmt_dur(ns) AS
  CASE
    WHEN ns IS NULL THEN '?'
    WHEN abs(ns) < 1000 THEN CAST(ns AS VARCHAR) || ' ns'
    WHEN abs(ns) < 1000000 THEN printf('%.1f us', ns / 1e3)
    WHEN abs(ns) < 1000000000 THEN printf('%.1f ms', ns / 1e6)
    ELSE printf('%.2f s', ns / 1e9)
  END;

-- Human count: 37, 999, 12.3k, 1.2M, 3.4G.
-- ARG n BIGINT. RETURNS VARCHAR ('?' for NULL).
CREATE OR REPLACE TEMP MACRO ss_fmt_count(n) AS
  CASE
    WHEN n IS NULL THEN '?'
    WHEN abs(n) < 1000 THEN CAST(CAST(n AS BIGINT) AS VARCHAR)
    WHEN abs(n) < 1000000 THEN printf('%.1fk', n / 1e3)
    WHEN abs(n) < 1000000000 THEN printf('%.1fM', n / 1e6)
    ELSE printf('%.1fG', n / 1e9)
  END;

-- Percentage a of b, rounded to an integer: '3%'; 'n/a' when b is 0 or NULL.
CREATE OR REPLACE TEMP MACRO ss_fmt_pct(a, b) AS
  CASE WHEN b IS NULL OR b = 0 OR a IS NULL THEN 'n/a'
       ELSE printf('%.0f%%', 100.0 * a / b) END;

-- A task as titles name it: kswapd threads by name ('kswapd0'), any other
-- task as 'comm[tid]' ('dd[4242]'); '?' stands in for an unknown name or tid.
CREATE OR REPLACE TEMP MACRO ss_task(name, tid) AS
  CASE WHEN regexp_matches(coalesce(name, ''), '^kswapd[0-9]+')
       THEN name
       ELSE coalesce(name, '?') || '[' || coalesce(CAST(tid AS VARCHAR), '?') || ']' END;

-- True for kswapd threads (named kswapdN, or kswapdN:M on some kernels).
CREATE OR REPLACE TEMP MACRO ss_is_kswapd(name) AS
  regexp_matches(coalesce(name, ''), '^kswapd[0-9]+(:[0-9]+)?$');

-- A %pS-printed function symbol without its '+0x0/0x210' offset suffix
-- (decoders already strip it; this keeps user-built tables working too).
CREATE OR REPLACE TEMP MACRO ss_sym(s) AS
  regexp_replace(s, '\+0x[0-9a-fA-F]+(/0x[0-9a-fA-F]+)?$', '');

-- The reclaim family of a direct_reclaim_begin/end row from its `event`
-- column: 'direct', 'memcg', 'memcg_softlimit' or 'node' ('direct' when the
-- writer left `event` NULL).
CREATE OR REPLACE TEMP MACRO ss_reclaim_family(event) AS
  coalesce(nullif(regexp_extract(event, '^mm_vmscan_(.*)_reclaim_(begin|end)$', 1), ''), 'direct');

-- First / last ts of the trace: trace_info's first_ts / last_ts when the
-- ingest recorded them, else the min / max ts of ftrace_event, else the
-- caller's fallback (a detector passes the min / max of its own tables, so
-- tables filled by hand in tests work without ftrace_event rows).
CREATE OR REPLACE TEMP MACRO ss_trace_start(fallback) AS coalesce(
  (SELECT TRY_CAST(value AS BIGINT) FROM trace_info WHERE key = 'first_ts'),
  (SELECT min(ts) FROM _ftrace_event),
  fallback);
CREATE OR REPLACE TEMP MACRO ss_trace_end(fallback) AS coalesce(
  (SELECT TRY_CAST(value AS BIGINT) FROM trace_info WHERE key = 'last_ts'),
  (SELECT max(ts) FROM _ftrace_event),
  fallback);

-- Severity from a measured value and two thresholds (higher is worse):
-- 'critical' at or above crit, 'warn' at or above warn, else `otherwise`
-- (NULL: no finding; 'info': always report).
CREATE OR REPLACE TEMP MACRO ss_severity(v, warn, crit, otherwise) AS
  CASE WHEN v >= crit THEN 'critical' WHEN v >= warn THEN 'warn' ELSE otherwise END;

-- Sort rank of a severity: critical 0, warn 1, info 2.
CREATE OR REPLACE TEMP MACRO ss_severity_rank(s) AS
  CASE s WHEN 'critical' THEN 0 WHEN 'warn' THEN 1 WHEN 'info' THEN 2 ELSE 3 END;
