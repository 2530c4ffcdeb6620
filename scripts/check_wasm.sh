#!/usr/bin/env bash
# Fails if a committed .wasm differs from what its C source builds to
# (the build is reproducible: same clang, same flags, same bytes).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0
for build in server/decode/ftrace_text/native/build_*.sh; do
  dir="$(dirname "$build")"
  name="$(basename "$build" .sh)"; name="${name#build_}"
  bash "$build" "$tmp/$name.wasm"
  if ! cmp -s "$tmp/$name.wasm" "$dir/$name.wasm"; then
    echo "$dir/$name.wasm does not match $dir/$name.c: run npm run wasm:build and commit the result" >&2
    status=1
  fi
done
exit $status
