#!/usr/bin/env bash
# Builds scan_kv.wasm (the field worker's key=value reader) from scan_kv.c.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/compile_wasm.sh" scan_kv "${1:-$here/scan_kv.wasm}" 16777216 \
  heap_base kv_reset kv_add_plan kv_add_untyped_plan kv_drop_plan kv_scan kv_untyped_out tokens token_starts token_lengths token_arena
