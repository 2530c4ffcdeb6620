#!/usr/bin/env bash
# Builds frame_lines.wasm (the main thread's line framer) from frame_lines.c.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/compile_wasm.sh" frame_lines "${1:-$here/frame_lines.wasm}" 4194304 frame_lines heap_base
