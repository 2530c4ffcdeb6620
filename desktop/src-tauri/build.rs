fn main() {
    // The page may call one command (shell.rs `desktop_action`); declaring it
    // makes it a permission ("allow-desktop-action") that only the window's
    // own server origin is given, at run time.
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(&["desktop_action"])))
        .expect("tauri-build");
}
