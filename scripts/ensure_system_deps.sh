#!/usr/bin/env bash
# System packages the test suite and benchmarks need, installed if missing:
#   chromium   - Playwright drives Debian's Chromium (no browser download)
#   trace-cmd  - the benchmark's reference (`trace-cmd report` speed)
#   zstd       - fast decompression of trace.dat v7 chunks (fzstd is the fallback)
#   clang-14, lld-14 - rebuild the committed WebAssembly from its C source
#                (npm run wasm:check; running stallscope needs neither)
#   libprotobuf32, libsqlite3-0 - run Perfetto's trace_processor_shell (../shared/tools/perfetto/,
#                not part of stallscope), the reference the Perfetto import/export tests compare with
#   libwebkit2gtk-4.1-dev, librsvg2-dev, libxdo-dev, pkg-config, build-essential - build the desktop
#                shell (desktop/, Tauri 2; Rust itself comes with the machine: Debian's rustc is too old)
#   webkit2gtk-driver, xvfb, xdotool - the desktop test drives the real window (npm run test:desktop)
#   openjdk-17-jre-headless - Apache Spark's JVM for `stallscope fleet` (fleet/spark/); then PySpark 4.0.1 and
#                pyarrow from PyPI in a virtual environment outside the clone, ~/.cache/stallscope/spark-venv
#                ($STALLSCOPE_SPARK_VENV), marked done by a stamp file so a rerun costs nothing
# Idempotent and quiet when everything is present.
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v trace-cmd >/dev/null 2>&1 || missing+=(trace-cmd)
command -v zstd >/dev/null 2>&1 || missing+=(zstd)
command -v clang-14 >/dev/null 2>&1 || missing+=(clang-14)
command -v wasm-ld-14 >/dev/null 2>&1 || missing+=(lld-14)
dpkg -s libprotobuf32 >/dev/null 2>&1 || missing+=(libprotobuf32)
dpkg -s libsqlite3-0 >/dev/null 2>&1 || missing+=(libsqlite3-0)
for p in libwebkit2gtk-4.1-dev librsvg2-dev libxdo-dev pkg-config build-essential webkit2gtk-driver xvfb xdotool; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing system packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null || { apt-get --fix-broken install -y -qq >/dev/null; apt-get install -y -qq "${missing[@]}" >/dev/null; }
else
  echo "stallscope tests need: ${missing[*]} (Debian: sudo apt-get install -y ${missing[*]})" >&2
  exit 1
fi
fi

# PySpark for `stallscope fleet` and its test (tests/fleet/), in its own virtual environment.
spark_venv="${STALLSCOPE_SPARK_VENV:-$HOME/.cache/stallscope/spark-venv}"
spark_stamp="$spark_venv/.stallscope-pyspark-4.0.1"
if [ ! -f "$spark_stamp" ]; then
  echo "installing pyspark 4.0.1 and pyarrow into $spark_venv" >&2
  mkdir -p "$(dirname "$spark_venv")"
  [ -x "$spark_venv/bin/python" ] || python3 -m venv "$spark_venv"
  "$spark_venv/bin/pip" install -q --disable-pip-version-check 'pyspark==4.0.1' pyarrow >&2
  "$spark_venv/bin/python" -c 'import pyspark, pyarrow' && touch "$spark_stamp"
fi
