//! One window per library. The first `stallscope-desktop` of a data
//! directory listens on a Unix socket; a later one (a second command line, a
//! file manager's "Open with", a `stallscope://` link) hands its files and
//! links to it, which opens them and raises its window, and exits without
//! starting a second server.
//!
//! A Unix socket rather than tauri-plugin-single-instance: on Linux that
//! plugin talks over the D-Bus session bus, which a bare X session, Xvfb in
//! CI or `ssh -X` need not have, and it brings zbus (dozens of crates) into a
//! cold build. The socket lives in `$XDG_RUNTIME_DIR` (the user's own 0700
//! directory), else in the data directory itself, and is named by the data
//! directory: two libraries are two windows, as two CLI data dirs are.

use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager};

/// What a later launch hands over (one JSON line).
#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Handover {
    pub files: Vec<PathBuf>,
    pub links: Vec<String>,
}

pub enum Claim {
    /// This is the first window of its library: it listens here.
    First(UnixListener),
    /// A running window took the files and links; this process should exit.
    Handed,
    /// No socket could be made (an unwritable directory, say): run alone.
    Alone,
}

static SOCKET: OnceLock<PathBuf> = OnceLock::new();

/// The data directory the server will use (the CLI's rule).
fn data_dir() -> PathBuf {
    let d = std::env::var_os("STALLSCOPE_DATA_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".local/share/stallscope"));
    std::fs::canonicalize(&d).unwrap_or(d)
}

fn socket_path(data: &Path, runtime: Option<PathBuf>) -> PathBuf {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut h);
    match runtime.filter(|d| d.is_dir()) {
        Some(dir) => dir.join(format!("stallscope-desktop-{:016x}.sock", h.finish())),
        None => data.join("desktop.sock"),
    }
}

/// Hands `args` to the running window of this library, or becomes that window.
pub fn claim(handover: &Handover) -> Claim {
    let data = data_dir();
    let path = socket_path(&data, std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from));
    for _ in 0..2 {
        match UnixStream::connect(&path) {
            Ok(stream) => match hand_over(stream, handover) {
                Ok(()) => return Claim::Handed,
                Err(e) => eprintln!("stallscope-desktop: the running window did not answer ({e}); opening another"),
            },
            // Nobody listens: a stale socket from a crash, or none yet.
            Err(_) => {
                let _ = std::fs::remove_file(&path);
            }
        }
        if path.parent() == Some(data.as_path()) {
            let _ = std::fs::create_dir_all(&data);
        }
        match UnixListener::bind(&path) {
            Ok(l) => {
                // Only this user may hand files to the window (connecting needs write
                // permission on the socket): the data directory fallback may be readable by others.
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
                let _ = SOCKET.set(path);
                return Claim::First(l);
            }
            // Another launch bound it just now: hand over to it instead.
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => continue,
            Err(e) => {
                eprintln!("stallscope-desktop: cannot listen on {}: {e}", path.display());
                return Claim::Alone;
            }
        }
    }
    Claim::Alone
}

fn hand_over(mut stream: UnixStream, handover: &Handover) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.set_write_timeout(Some(Duration::from_secs(10)))?;
    let mut line = serde_json::to_string(handover).map_err(std::io::Error::other)?;
    line.push('\n');
    stream.write_all(line.as_bytes())?;
    stream.shutdown(std::net::Shutdown::Write)?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    if answer.trim() == "ok" {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("answered {answer:?}")))
    }
}

/// Serves later launches: opens what they hand over and raises the window.
pub fn listen(app: &AppHandle, listener: UnixListener) {
    let app = app.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
            let mut text = String::new();
            // A launch's whole request is one line; more than 1 MiB is not one.
            if (&mut stream).take(1 << 20).read_to_string(&mut text).is_err() {
                continue;
            }
            let Ok(h) = serde_json::from_str::<Handover>(text.trim()) else {
                let _ = stream.write_all(b"bad request\n");
                continue;
            };
            let target = app.clone();
            let _ = app.run_on_main_thread(move || {
                if let Some(w) = target.get_webview_window(crate::shell::MAIN) {
                    let _ = w.unminimize();
                    let _ = w.show();
                    let _ = w.set_focus();
                }
                if let Some(link) = h.links.last() {
                    crate::shell::open_link(&target, link);
                }
                crate::shell::open_paths(&target, h.files);
            });
            let _ = stream.write_all(b"ok\n");
        }
    });
}

/// Removes this window's socket as it exits.
pub fn release() {
    if let Some(p) = SOCKET.get() {
        let _ = std::fs::remove_file(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_socket_per_data_directory() {
        let run = Some(std::env::temp_dir());
        let a = socket_path(Path::new("/home/u/.local/share/stallscope"), run.clone());
        let b = socket_path(Path::new("/srv/other-library"), run.clone());
        assert_ne!(a, b);
        assert_eq!(a, socket_path(Path::new("/home/u/.local/share/stallscope"), run));
        assert!(a.starts_with(std::env::temp_dir()));
        // Without a runtime directory: inside the data directory itself.
        assert_eq!(socket_path(Path::new("/srv/lib"), None), PathBuf::from("/srv/lib/desktop.sock"));
    }

    #[test]
    fn a_handover_reaches_the_listener_and_is_answered() {
        let dir = std::env::temp_dir().join(format!("stallscope-single-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.sock");
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut text = String::new();
            s.read_to_string(&mut text).unwrap();
            s.write_all(b"ok\n").unwrap();
            serde_json::from_str::<Handover>(text.trim()).unwrap()
        });
        let sent = Handover { files: vec![PathBuf::from("/tmp/a b\nc.dat")], links: vec!["stallscope://open/?trace=ab".into()] };
        hand_over(UnixStream::connect(&path).unwrap(), &sent).unwrap();
        assert_eq!(server.join().unwrap(), sent);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
