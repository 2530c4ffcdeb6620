//! The window's own server: `stallscope serve --desktop` (server/desktop/
//! desktop_channel.ts), spoken to over its stdin and stdout, one JSON object
//! a line. Nothing else can reach it: the token goes over the pipe (not argv,
//! which any user can read), and files are named over the pipe too.
//!
//! Its stdin is the lifeline: when this process exits (the window closed) or
//! dies (a crash, SIGKILL), the kernel closes the pipe and the server stops.
//! PR_SET_PDEATHSIG adds a SIGTERM for the case where the pipe is held open.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;

/// Where the server's JavaScript runtime and bundle are.
pub struct ServerFiles {
    pub node: PathBuf,
    pub script: PathBuf,
}

impl ServerFiles {
    /// `$STALLSCOPE_DESKTOP_NODE` / `$STALLSCOPE_DESKTOP_SERVER` (a checkout's
    /// `npm run desktop`), else the package's resources: `runtime/node` and
    /// `server/stallscope-server.mjs` (desktop/scripts/build.mjs lays them out).
    pub fn locate(resource_dir: Option<&Path>) -> Result<ServerFiles, String> {
        let res = std::env::var_os("STALLSCOPE_DESKTOP_RESOURCES")
            .map(PathBuf::from)
            .or_else(|| resource_dir.map(Path::to_path_buf));
        let node = std::env::var_os("STALLSCOPE_DESKTOP_NODE")
            .map(PathBuf::from)
            .or_else(|| res.as_ref().map(|r| r.join("runtime/node")));
        let script = std::env::var_os("STALLSCOPE_DESKTOP_SERVER")
            .map(PathBuf::from)
            .or_else(|| res.as_ref().map(|r| r.join("server/stallscope-server.mjs")));
        match (node, script) {
            (Some(node), Some(script)) => {
                for f in [&node, &script] {
                    if !f.is_file() {
                        return Err(format!("{} is missing: the package is incomplete (reinstall stallscope)", f.display()));
                    }
                }
                Ok(ServerFiles { node, script })
            }
            _ => Err("cannot find the server's files (no resource directory)".into()),
        }
    }
}

/// What the server says on stdout.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub enum ServerMessage {
    Ready { url: String },
    Opened(Opened),
    Error(String),
}

#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Opened {
    pub id: u64,
    pub job_id: Option<String>,
    pub name: Option<String>,
    pub error: Option<String>,
}

pub struct ServerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl ServerProcess {
    /// Starts the server; `on_message` gets each line it writes, `on_exit` its end.
    pub fn start(
        files: &ServerFiles,
        token: &str,
        public_url: Option<&str>,
        on_message: impl Fn(ServerMessage) + Send + 'static,
        on_exit: impl FnOnce(String) + Send + 'static,
    ) -> Result<ServerProcess, String> {
        let mut cmd = Command::new(&files.node);
        cmd.arg(&files.script).args(["serve", "--desktop", "--port", "0"]);
        // As bin/stallscope.mjs's shebang does: glibc returns freed buffers to the OS
        // (15-35 MB less peak RSS while a trace is ingested; bin/stallscope.mjs says why).
        cmd.env("MALLOC_TRIM_THRESHOLD_", "0");
        if let Some(u) = public_url {
            cmd.args(["--public-url", u]);
        }
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| format!("could not start {}: {e}", files.node.display()))?;
        let mut stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        writeln!(stdin, "{}", json!({ "token": token })).map_err(|e| format!("the server did not take its token: {e}"))?;

        // Its stderr goes to ours, and the last lines are kept to say why it stopped.
        let tail = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let tail_w = tail.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stderr);
            let mut line = String::new();
            while r.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
                eprint!("{line}");
                let mut t = tail_w.lock().unwrap();
                t.push_str(&line);
                if t.len() > 4000 {
                    let cut = t.len() - 2000;
                    let cut = (cut..t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(t.len());
                    *t = t[cut..].to_string();
                }
                line.clear();
            }
        });
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut line = String::new();
            loop {
                line.clear();
                match r.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => match serde_json::from_str::<ServerMessage>(line.trim()) {
                        Ok(m) => on_message(m),
                        Err(_) => eprintln!("stallscope-desktop: unexpected line from the server: {}", line.trim()),
                    },
                }
            }
            // Give stderr a moment to deliver the last words.
            std::thread::sleep(Duration::from_millis(200));
            let why = tail.lock().unwrap().trim().to_string();
            on_exit(why);
        });
        Ok(ServerProcess { child, stdin: Some(stdin) })
    }

    /// Asks the server to ingest a file the user chose.
    pub fn open(&mut self, id: u64, path: &Path) -> Result<(), String> {
        let p = path.to_str().ok_or_else(|| format!("{} is not a UTF-8 path", path.display()))?;
        let stdin = self.stdin.as_mut().ok_or("the server has stopped")?;
        writeln!(stdin, "{}", json!({ "open": { "id": id, "path": p } })).map_err(|e| format!("the server has stopped ({e})"))
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes the pipe (the server stops on its own), then waits up to `grace`; kills it after that.
    pub fn stop(&mut self, grace: Duration) {
        drop(self.stdin.take());
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(5));
    }
}

/// A fresh token for one launch: 32 bytes from the kernel, hex.
pub fn fresh_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("no randomness for the access token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
