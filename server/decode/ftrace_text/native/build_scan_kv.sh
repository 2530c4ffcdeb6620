#!/usr/bin/env bash
# Builds scan_kv.wasm from scan_kv.c with Debian's clang and wasm-ld
# (apt-get install -y clang-14 lld-14). The .wasm is committed, so running
# stallscope needs no compiler; `npm run wasm:check` (run by .ci/run)
# rebuilds it and fails if the committed file differs from its source.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/scan_kv.wasm}"
clang="$(command -v clang-14 || command -v clang)"
ld="$(command -v wasm-ld-14 || command -v wasm-ld)"
"$clang" --target=wasm32 -O3 -msimd128 -nostdlib -fno-builtin \
  -ffile-prefix-map="$here"=. \
  -Wall -Wextra -Werror \
  -fuse-ld="$ld" -Wl,--no-entry -Wl,--strip-all \
  -Wl,--export=heap_base -Wl,--export=kv_reset -Wl,--export=kv_add_plan -Wl,--export=kv_drop_plan -Wl,--export=kv_scan \
  -Wl,--export=tokens -Wl,--export=token_starts -Wl,--export=token_lengths -Wl,--export=token_arena \
  -Wl,--initial-memory=16777216 \
  -o "$out" "$here/scan_kv.c"
