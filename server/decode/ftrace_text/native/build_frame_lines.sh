#!/usr/bin/env bash
# Builds frame_lines.wasm from frame_lines.c with Debian's clang and wasm-ld
# (apt-get install -y clang-14 lld-14). The .wasm is committed, so running
# stallscope needs no compiler; `npm run wasm:check` (run by .ci/run)
# rebuilds it and fails if the committed file differs from its source.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/frame_lines.wasm}"
clang="$(command -v clang-14 || command -v clang)"
ld="$(command -v wasm-ld-14 || command -v wasm-ld)"
"$clang" --target=wasm32 -O3 -msimd128 -nostdlib -fno-builtin \
  -ffile-prefix-map="$here"=. \
  -Wall -Wextra -Werror \
  -fuse-ld="$ld" -Wl,--no-entry -Wl,--strip-all \
  -Wl,--export=frame_lines -Wl,--export=heap_base \
  -Wl,--initial-memory=4194304 \
  -o "$out" "$here/frame_lines.c"
