//! What the desktop app remembers between launches, and what the user may
//! set, both in its configuration directory (~/.config/org.stallscope.desktop/):
//!
//!   state.json     written by the app: recent files, the window's size and place
//!   settings.json  written by the user: {"publicUrl": "https://stalls.example.org"}
//!                  (a team server: "Copy link" and excerpts link there);
//!                  $STALLSCOPE_PUBLIC_URL overrides it
//!
//! A missing or unreadable file means defaults, never an error.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Files in File > Open Recent.
pub const MAX_RECENT: usize = 10;

#[derive(Serialize, Deserialize, Default, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Geometry {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    #[serde(default)]
    pub maximized: bool,
}

#[derive(Serialize, Deserialize, Default, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct DesktopState {
    #[serde(default)]
    pub recent: Vec<PathBuf>,
    #[serde(default)]
    pub window: Option<Geometry>,
}

impl DesktopState {
    pub fn load(dir: &Path) -> DesktopState {
        std::fs::read(dir.join("state.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Written to a temporary file and renamed over the old one: a crash never leaves half a file.
    pub fn save(&self, dir: &Path) {
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            let tmp = dir.join(format!("state.json.{}.tmp", std::process::id()));
            std::fs::write(&tmp, serde_json::to_vec_pretty(self)?)?;
            std::fs::rename(&tmp, dir.join("state.json"))
        };
        if let Err(e) = write() {
            eprintln!("stallscope-desktop: could not save {}: {e}", dir.join("state.json").display());
        }
    }

    /// `path` becomes the most recent file (once).
    pub fn add_recent(&mut self, path: &Path) {
        self.recent.retain(|p| p != path);
        self.recent.insert(0, path.to_path_buf());
        self.recent.truncate(MAX_RECENT);
    }
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// The team server links are written for (http or https, no query).
    pub public_url: Option<String>,
}

impl Settings {
    pub fn load(dir: &Path) -> Settings {
        let mut s: Settings = std::fs::read(dir.join("settings.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        if let Ok(u) = std::env::var("STALLSCOPE_PUBLIC_URL") {
            s.public_url = Some(u);
        }
        s.public_url = s
            .public_url
            .map(|u| u.trim().trim_end_matches('/').to_string())
            .filter(|u| u.starts_with("http://") || u.starts_with("https://"));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_files_are_unique_newest_first_and_bounded() {
        let mut s = DesktopState::default();
        for i in 0..12 {
            s.add_recent(Path::new(&format!("/t/{i}.dat")));
        }
        s.add_recent(Path::new("/t/5.dat"));
        assert_eq!(s.recent.len(), MAX_RECENT);
        assert_eq!(s.recent[0], Path::new("/t/5.dat"));
        assert_eq!(s.recent[1], Path::new("/t/11.dat"));
        assert_eq!(s.recent.iter().filter(|p| p.ends_with("5.dat")).count(), 1);
    }

    #[test]
    fn state_survives_a_save_and_a_load() {
        let dir = std::env::temp_dir().join(format!("stallscope-desktop-state-{}", std::process::id()));
        let mut s = DesktopState::default();
        s.add_recent(Path::new("/a/trace.dat"));
        s.window = Some(Geometry { x: 10, y: 20, width: 900, height: 700, maximized: false });
        s.save(&dir);
        let back = DesktopState::load(&dir);
        assert_eq!(back.recent, vec![PathBuf::from("/a/trace.dat")]);
        assert_eq!(back.window, s.window);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
