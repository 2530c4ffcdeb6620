//! The native menu bar and its shortcuts, for what the app already does:
//! open, close the trace, copy a link, copy as text, zoom, find, step
//! through findings. Actions on the page are sent to the app's desktop
//! bridge (app/desktop/desktop_bridge.ts), which presses the app's own
//! buttons: one behaviour, whether clicked, typed or chosen from a menu.
//!
//! Shortcuts all carry Ctrl: a bare key as a menu accelerator would be
//! taken from text fields, and the app's own keys (W/A/S/D, [ ], L, T, N)
//! keep working as they are.

use std::path::Path;

use tauri::menu::{AboutMetadataBuilder, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::{AppHandle, Runtime};

/// Menu item ids that are page actions, sent to the bridge as they are.
pub const PAGE_ACTIONS: &[&str] = &[
    "close-trace",
    "copy-link",
    "copy-text",
    "find",
    "zoom-in",
    "zoom-out",
    "zoom-fit",
    "next-finding",
    "prev-finding",
];

pub const OPEN: &str = "open";
pub const QUIT: &str = "quit";
pub const CLEAR_RECENT: &str = "clear-recent";
pub const RECENT_PREFIX: &str = "recent:";
pub const RECENT_MENU: &str = "open-recent";

pub fn build<R: Runtime>(app: &AppHandle<R>, recent: &[std::path::PathBuf]) -> tauri::Result<Menu<R>> {
    let item = |id: &str, text: &str, accel: Option<&str>| MenuItem::with_id(app, id, text, true, accel);
    let sep = || PredefinedMenuItem::separator(app);

    let open_recent = Submenu::with_id(app, RECENT_MENU, "Open &Recent", true)?;
    fill_recent(app, &open_recent, recent)?;
    let file = Submenu::with_items(
        app,
        "&File",
        true,
        &[
            &item(OPEN, "&Open…", Some("CmdOrCtrl+O"))?,
            &open_recent,
            &sep()?,
            &item("close-trace", "&Close Trace", Some("CmdOrCtrl+W"))?,
            &sep()?,
            &item(QUIT, "&Quit", Some("CmdOrCtrl+Q"))?,
        ],
    )?;
    let edit = Submenu::with_items(
        app,
        "&Edit",
        true,
        &[
            &item("copy-link", "Copy &Link", Some("CmdOrCtrl+Shift+L"))?,
            &item("copy-text", "Copy as &Text", Some("CmdOrCtrl+Shift+C"))?,
            &sep()?,
            &item("find", "&Find Track…", Some("CmdOrCtrl+F"))?,
        ],
    )?;
    let view = Submenu::with_items(
        app,
        "&View",
        true,
        &[
            &item("zoom-in", "Zoom &In", Some("CmdOrCtrl+="))?,
            &item("zoom-out", "Zoom &Out", Some("CmdOrCtrl+-"))?,
            &item("zoom-fit", "&Whole Trace", Some("CmdOrCtrl+0"))?,
            &sep()?,
            &item("next-finding", "&Next Finding", Some("CmdOrCtrl+]"))?,
            &item("prev-finding", "&Previous Finding", Some("CmdOrCtrl+["))?,
        ],
    )?;
    let about = AboutMetadataBuilder::new()
        .name(Some("stallscope"))
        .version(Some(env!("CARGO_PKG_VERSION")))
        .comments(Some("Memory-reclaim and scheduler stalls in Linux ftrace traces"))
        .license(Some("MIT"))
        .build();
    let help = Submenu::with_items(app, "&Help", true, &[&PredefinedMenuItem::about(app, Some("&About stallscope"), Some(about))?])?;
    Menu::with_items(app, &[&file, &edit, &view, &help])
}

/// Rewrites File > Open Recent from the list (newest first).
pub fn fill_recent<R: Runtime>(app: &AppHandle<R>, menu: &Submenu<R>, recent: &[std::path::PathBuf]) -> tauri::Result<()> {
    while menu.remove_at(0)?.is_some() {}
    if recent.is_empty() {
        menu.append(&MenuItem::with_id(app, "recent-none", "No recent files", false, None::<&str>)?)?;
        return Ok(());
    }
    for (i, p) in recent.iter().enumerate() {
        menu.append(&MenuItem::with_id(app, format!("{RECENT_PREFIX}{i}"), recent_label(i, p), true, None::<&str>)?)?;
    }
    menu.append(&PredefinedMenuItem::separator(app)?)?;
    menu.append(&MenuItem::with_id(app, CLEAR_RECENT, "Clear Recent", true, None::<&str>)?)?;
    Ok(())
}

/// "1  trace.dat — /home/me/traces" (`&` doubled: it marks a mnemonic; muda escapes `_` itself).
fn recent_label(i: usize, p: &Path) -> String {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = p.parent().map(|d| d.display().to_string()).unwrap_or_default();
    let text = format!("{name} — {dir}").replace('&', "&&");
    if i < 9 {
        format!("&{}  {text}", i + 1)
    } else {
        text
    }
}
