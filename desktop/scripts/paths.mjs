// Where the desktop build puts things, for the build script and the desktop test.
//
// The Rust target directory and tauri-driver live outside the clone, under
// ~/.cache/stallscope/ (override with STALLSCOPE_DESKTOP_TARGET_DIR and
// STALLSCOPE_DESKTOP_TOOLS_DIR): a second build, or a CI run with that cache
// kept, reuses them instead of compiling Tauri again.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const desktopDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const repoDir = path.dirname(desktopDir);
const cache = path.join(os.homedir(), '.cache', 'stallscope');
export const targetDir = process.env.STALLSCOPE_DESKTOP_TARGET_DIR || path.join(cache, 'desktop', 'target');
/** `cargo install --root` for tauri-driver (the desktop test's WebDriver front end). */
export const toolsDir = process.env.STALLSCOPE_DESKTOP_TOOLS_DIR || path.join(cache, 'cargo-bin');
/** What the package ships beside the shell (a checkout's run points the shell here). */
export const desktopResources = path.join(desktopDir, 'build', 'resources');
export const desktopBinary = path.join(targetDir, 'release', 'stallscope-desktop');
export const tauriDriverBinary = path.join(toolsDir, 'bin', 'tauri-driver');
/** The tauri-driver release the test is written against (crates.io). */
export const TAURI_DRIVER_VERSION = '2.1.0';
