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
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing system packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null || { apt-get --fix-broken install -y -qq >/dev/null; apt-get install -y -qq "${missing[@]}" >/dev/null; }
else
  echo "stallscope tests need: ${missing[*]} (Debian: sudo apt-get install -y ${missing[*]})" >&2
  exit 1
fi
