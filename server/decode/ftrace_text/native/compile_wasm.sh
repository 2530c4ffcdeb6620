#!/usr/bin/env bash
# Compiles one C file of this directory to WebAssembly with Debian's clang
# and wasm-ld (apt-get install -y clang-14 lld-14), the same bytes on every
# run. Used by the build_*.sh scripts, one per module:
#   compile_wasm.sh NAME OUT INITIAL_MEMORY_BYTES EXPORT...
# The .wasm files are committed, so running stallscope needs no compiler;
# `npm run wasm:check` (run by npm test) rebuilds them and fails if a
# committed file differs from its source.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
name="$1"; out="$2"; memory="$3"; shift 3
exports=()
for e in "$@"; do exports+=("-Wl,--export=$e"); done
clang="$(command -v clang-14 || command -v clang)"
ld="$(command -v wasm-ld-14 || command -v wasm-ld)"
"$clang" --target=wasm32 -O3 -msimd128 -nostdlib -fno-builtin \
  -ffile-prefix-map="$here"=. \
  -Wall -Wextra -Werror \
  -fuse-ld="$ld" -Wl,--no-entry -Wl,--strip-all \
  "${exports[@]}" \
  -Wl,--initial-memory="$memory" \
  -o "$out" "$here/$name.c"
