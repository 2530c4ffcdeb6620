//! The window, its server, and how files and links reach them.
//!
//! Page <-> shell: the shell calls the app's desktop bridge
//! (`window.stallscopeDesktop`, app/desktop/desktop_bridge.ts) with
//! `eval`, once the bridge has said `ready`; the page calls the one command
//! `desktop_action` ("ready", "open-dialog"), allowed for the window's own
//! server origin only (a capability added once its port is known).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tauri::ipc::CapabilityBuilder;
use tauri::menu::Submenu;
use tauri::webview::{DownloadEvent, NewWindowResponse, PageLoadEvent};
use tauri::{AppHandle, DragDropEvent, Manager, RunEvent, Url, WebviewUrl, WebviewWindow, WebviewWindowBuilder, WindowEvent, Wry};

use crate::links::{looks_like_link, parse_link, LinkView};
use crate::menu;
use crate::single;
use crate::server::{fresh_token, Opened, ServerFiles, ServerMessage, ServerProcess};
use crate::state::{DesktopState, Geometry, Settings};

pub const MAIN: &str = "main";
/// The page shown until the server answers, and when it could not start (desktop/splash/).
const SPLASH: &str = "index.html";

pub struct Shell {
    token: String,
    config_dir: PathBuf,
    public_url: Option<String>,
    server: Mutex<Option<ServerProcess>>,
    /// "http://127.0.0.1:<port>/" once the server is up.
    base: Mutex<Option<String>>,
    /// The bridge on the current page said it is listening.
    page_ready: AtomicBool,
    /// Calls for the bridge made before it was ready.
    pending_js: Mutex<Vec<String>>,
    /// A link to show once the server is up.
    pending_link: Mutex<Option<LinkView>>,
    /// Files asked of the server, by request id.
    opens: Mutex<HashMap<u64, PathBuf>>,
    next_id: AtomicU64,
    state: Mutex<DesktopState>,
    geometry_saved: Mutex<Instant>,
    recent_menu: Mutex<Option<Submenu<Wry>>>,
    exiting: AtomicBool,
}

/// What the command line asked for.
#[derive(Debug, Default)]
struct Args {
    files: Vec<PathBuf>,
    links: Vec<String>,
}

fn parse_args() -> Args {
    let mut args = Args::default();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "-h" | "--help" => {
                println!("usage: stallscope-desktop [FILE | stallscope://open/?trace=... | https://server/?trace=...]...\n\nOpens trace files (trace.dat, trace-cmd report text, tracefs text, Perfetto traces) in the stallscope window.\nTraces live in $STALLSCOPE_DATA_DIR (default ~/.local/share/stallscope), shared with the stallscope command.");
                std::process::exit(0);
            }
            "-V" | "--version" => {
                println!("stallscope-desktop {}", env!("CARGO_PKG_VERSION"));
                std::process::exit(0);
            }
            _ => {}
        }
        if let Some(p) = file_uri_path(&a) {
            args.files.push(p);
        } else if looks_like_link(&a) {
            args.links.push(a);
        } else {
            args.files.push(cwd.join(&a));
        }
    }
    args
}

/// A `file://` URI (how file managers pass files to `%U`) as a path.
fn file_uri_path(arg: &str) -> Option<PathBuf> {
    let rest = arg.strip_prefix("file://")?;
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = path.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

pub fn run() {
    let args = parse_args();
    // A window of this library is open already: it takes the files and links, and this process ends.
    let listener = match single::claim(&single::Handover { files: args.files.clone(), links: args.links.clone() }) {
        single::Claim::Handed => std::process::exit(0),
        single::Claim::First(l) => Some(l),
        single::Claim::Alone => None,
    };
    let app = tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![desktop_action])
        .on_menu_event(|app, event| on_menu(app, event.id().as_ref()))
        .setup(move |app| {
            setup(app.handle(), args)?;
            if let Some(l) = listener {
                single::listen(app.handle(), l);
            }
            Ok(())
        })
        .build(tauri::generate_context!())
        .unwrap_or_else(|e| {
            eprintln!("stallscope-desktop: {e}");
            std::process::exit(1);
        });
    app.run(|app, event| {
        if let RunEvent::Exit = event {
            let shell = app.state::<Shell>();
            shell.exiting.store(true, Ordering::SeqCst);
            single::release();
            shell.save_geometry_now(app);
            // The pipe closes and the server stops; killed if it takes longer than 5 s.
            let server = shell.server.lock().unwrap().take();
            if let Some(mut s) = server {
                s.stop(Duration::from_secs(5));
            }
        }
    });
}

fn setup(app: &AppHandle, args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let config_dir = app.path().app_config_dir()?;
    let settings = Settings::load(&config_dir);
    let state = DesktopState::load(&config_dir);
    let shell = Shell {
        token: fresh_token()?,
        config_dir,
        public_url: settings.public_url,
        server: Mutex::new(None),
        base: Mutex::new(None),
        page_ready: AtomicBool::new(false),
        pending_js: Mutex::new(Vec::new()),
        pending_link: Mutex::new(None),
        opens: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(1),
        state: Mutex::new(state.clone()),
        geometry_saved: Mutex::new(Instant::now()),
        recent_menu: Mutex::new(None),
        exiting: AtomicBool::new(false),
    };
    app.manage(shell);

    let menu = menu::build(app, &state.recent)?;
    if let Some(sub) = menu.get(menu::RECENT_MENU).and_then(|k| k.as_submenu().cloned()) {
        *app.state::<Shell>().recent_menu.lock().unwrap() = Some(sub);
    }
    app.set_menu(menu)?;

    let window = build_window(app, state.window.as_ref())?;
    // The app copies links and excerpts from menu items too, where the page has no user gesture to copy with.
    window.with_webview(|wv| {
        use webkit2gtk::{SettingsExt, WebViewExt};
        if let Some(s) = wv.inner().settings() {
            s.set_javascript_can_access_clipboard(true);
        }
    })?;

    start_server(app);
    if let Some(link) = args.links.last() {
        open_link(app, link);
    }
    open_paths(app, args.files);
    Ok(())
}

fn build_window(app: &AppHandle, geometry: Option<&Geometry>) -> tauri::Result<WebviewWindow> {
    let share_origin = app.state::<Shell>().public_url.clone().unwrap_or_else(|| "stallscope://open".into());
    // What the bridge needs before the app's code runs: where share links point.
    let init = format!(
        "Object.defineProperty(window, '__STALLSCOPE_DESKTOP__', {{ value: Object.freeze({{ shareOrigin: {} }}) }});",
        serde_json::to_string(&share_origin).unwrap()
    );
    let nav_app = app.clone();
    let load_app = app.clone();
    let dl_app = app.clone();
    let new_app = app.clone();
    let mut b = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::App(SPLASH.into()))
        .title("stallscope")
        .min_inner_size(640.0, 420.0)
        .inner_size(1280.0, 820.0)
        .initialization_script(&init)
        .on_navigation(move |url| allow_navigation(&nav_app, url))
        .on_page_load(move |_w, payload| {
            if payload.event() == PageLoadEvent::Started {
                load_app.state::<Shell>().page_ready.store(false, Ordering::SeqCst);
            }
        })
        .on_document_title_changed(|w, title| {
            let _ = w.set_title(if title.trim().is_empty() { "stallscope" } else { title.as_str() });
        })
        .on_download(move |_w, event| {
            if let DownloadEvent::Requested { destination, .. } = event {
                let dir = dl_app.path().download_dir().unwrap_or_else(|_| std::env::temp_dir());
                let name = destination.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "stallscope-download".into());
                *destination = unused_path(&dir, Path::new(&name));
            }
            true
        })
        .on_new_window(move |url, _features| {
            // "Open in Perfetto" and links in notes: the user's browser, not a second app window.
            open_externally(&new_app, &url);
            NewWindowResponse::Deny
        });
    if let Some(g) = geometry {
        b = b.inner_size(g.width.max(640) as f64, g.height.max(420) as f64).position(g.x as f64, g.y as f64).maximized(g.maximized);
    } else {
        b = b.center();
    }
    let window = b.build()?;
    let ev_app = app.clone();
    window.on_window_event(move |event| match event {
        WindowEvent::DragDrop(DragDropEvent::Drop { paths, .. }) => open_paths(&ev_app, paths.clone()),
        WindowEvent::Moved(_) | WindowEvent::Resized(_) => ev_app.state::<Shell>().save_geometry_soon(&ev_app),
        WindowEvent::CloseRequested { .. } => ev_app.state::<Shell>().save_geometry_now(&ev_app),
        _ => {}
    });
    Ok(window)
}

/// `name` in `dir`, or `name (1)`, `name (2)`... if taken.
fn unused_path(dir: &Path, name: &Path) -> PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    let stem = name.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = name.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    (1..1000).map(|i| dir.join(format!("{stem} ({i}){ext}"))).find(|p| !p.exists()).unwrap_or(first)
}

/// Only the window's own server and the splash page load in the window; links go elsewhere.
fn allow_navigation(app: &AppHandle, url: &Url) -> bool {
    let base = app.state::<Shell>().base.lock().unwrap().clone();
    if let Some(base) = base {
        if url.as_str().starts_with(&base) {
            return true;
        }
    }
    match url.scheme() {
        "tauri" => true,
        "about" => url.as_str() == "about:blank",
        "stallscope" => {
            let u = url.to_string();
            let app = app.clone();
            // Not from inside the navigation callback: navigating from there is re-entrant.
            let _ = app.clone().run_on_main_thread(move || open_link(&app, &u));
            false
        }
        "http" | "https" | "mailto" => {
            open_externally(app, url);
            false
        }
        _ => false,
    }
}

fn open_externally(_app: &AppHandle, url: &Url) {
    if !matches!(url.scheme(), "http" | "https" | "mailto") {
        return;
    }
    if let Err(e) = std::process::Command::new("xdg-open")
        .arg(url.as_str())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
    {
        eprintln!("stallscope-desktop: could not open {url} in a browser: {e}");
    }
}

fn start_server(app: &AppHandle) {
    let shell = app.state::<Shell>();
    let files = match ServerFiles::locate(app.path().resource_dir().ok().as_deref()) {
        Ok(f) => f,
        Err(e) => return show_failure(app, &format!("stallscope could not start its server: {e}")),
    };
    let msg_app = app.clone();
    let exit_app = app.clone();
    let started = ServerProcess::start(
        &files,
        &shell.token,
        shell.public_url.as_deref(),
        move |m| on_server_message(&msg_app, m),
        move |why| {
            let shell = exit_app.state::<Shell>();
            if !shell.exiting.load(Ordering::SeqCst) {
                show_failure(&exit_app, &format!("The stallscope server stopped.\n\n{why}"));
            }
        },
    );
    match started {
        Ok(p) => {
            eprintln!("stallscope-desktop: server pid {}", p.pid());
            *shell.server.lock().unwrap() = Some(p);
        }
        Err(e) => show_failure(app, &e),
    }
}

/// The splash page, saying what went wrong.
fn show_failure(app: &AppHandle, message: &str) {
    eprintln!("stallscope-desktop: {message}");
    let Some(w) = app.get_webview_window(MAIN) else { return };
    let mut url = Url::parse("tauri://localhost/").unwrap().join(SPLASH).unwrap();
    url.set_fragment(Some(&format!("error={}", encode_component(message))));
    let _ = w.navigate(url);
}

fn encode_component(s: &str) -> String {
    s.bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

fn on_server_message(app: &AppHandle, m: ServerMessage) {
    let shell = app.state::<Shell>();
    match m {
        ServerMessage::Ready { url } => {
            let Ok(base) = Url::parse(&url) else { return show_failure(app, &format!("the server gave a bad address: {url}")) };
            let origin = format!("http://127.0.0.1:{}", base.port().unwrap_or(80));
            *shell.base.lock().unwrap() = Some(format!("{origin}/"));
            // The bridge on this origin, and nothing else, may call the shell.
            let cap = CapabilityBuilder::new("window-server").remote(origin.clone()).window(MAIN).webview(MAIN).permission("allow-desktop-action");
            if let Err(e) = app.add_capability(cap) {
                eprintln!("stallscope-desktop: {e}");
            }
            let link = shell.pending_link.lock().unwrap().take();
            // The first load carries the token: the server turns it into an HttpOnly cookie, the app drops it from the address.
            let mut query = link.as_ref().map(|l| format!("{}&", l.query)).unwrap_or_default();
            query.push_str(&format!("token={}", shell.token));
            let fragment = link.map(|l| l.fragment).filter(|f| !f.is_empty());
            navigate(app, &format!("{origin}/?{query}{}", fragment.map(|f| format!("#{f}")).unwrap_or_default()));
        }
        ServerMessage::Opened(o) => on_opened(app, o),
        ServerMessage::Error(e) => eprintln!("stallscope-desktop: the server refused a request: {e}"),
    }
}

fn navigate(app: &AppHandle, url: &str) {
    let Some(w) = app.get_webview_window(MAIN) else { return };
    match Url::parse(url) {
        Ok(u) => {
            if let Err(e) = w.navigate(u) {
                eprintln!("stallscope-desktop: {e}");
            }
        }
        Err(e) => eprintln!("stallscope-desktop: bad address {url}: {e}"),
    }
}

fn on_opened(app: &AppHandle, o: Opened) {
    let shell = app.state::<Shell>();
    let path = shell.opens.lock().unwrap().remove(&o.id);
    let name = o.name.clone().or_else(|| path.as_ref().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned())).unwrap_or_default();
    match (o.job_id, o.error) {
        (Some(job), _) => {
            if let Some(p) = path {
                shell.remember_recent(app, &p);
            }
            shell.call_page(app, "followJob", &[&job, &name]);
        }
        (None, error) => shell.call_page(app, "openFailed", &[&name, &error.unwrap_or_else(|| "the server did not say why".into())]),
    }
}

/// Opens files by path: the server ingests them, the page shows the progress.
pub fn open_paths(app: &AppHandle, paths: Vec<PathBuf>) {
    let shell = app.state::<Shell>();
    for p in paths {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string());
        let id = shell.next_id.fetch_add(1, Ordering::SeqCst);
        shell.opens.lock().unwrap().insert(id, p.clone());
        let sent = match shell.server.lock().unwrap().as_mut() {
            Some(s) => s.open(id, &p),
            None => Err("the server is not running".to_string()),
        };
        if let Err(e) = sent {
            shell.opens.lock().unwrap().remove(&id);
            shell.call_page(app, "openFailed", &[&name, &e]);
        }
    }
}

/// Shows a link's view: found by content hash in this library, or the app offers to open the file.
pub fn open_link(app: &AppHandle, link: &str) {
    let view = match parse_link(link) {
        Ok(v) => v,
        Err(e) => {
            let shell = app.state::<Shell>();
            shell.call_page(app, "openFailed", &["link", &format!("cannot open {}: {e}", link.chars().take(120).collect::<String>())]);
            return;
        }
    };
    let shell = app.state::<Shell>();
    let base = shell.base.lock().unwrap().clone();
    match base {
        Some(base) => {
            let frag = if view.fragment.is_empty() { String::new() } else { format!("#{}", view.fragment) };
            navigate(app, &format!("{base}?{}{frag}", view.query));
        }
        None => *shell.pending_link.lock().unwrap() = Some(view),
    }
}

fn on_menu(app: &AppHandle, id: &str) {
    let shell = app.state::<Shell>();
    match id {
        menu::OPEN => show_open_dialog(app),
        menu::QUIT => app.exit(0),
        menu::CLEAR_RECENT => {
            let mut st = shell.state.lock().unwrap();
            st.recent.clear();
            st.save(&shell.config_dir);
            drop(st);
            shell.refresh_recent_menu(app);
        }
        _ if id.starts_with(menu::RECENT_PREFIX) => {
            let i: usize = id[menu::RECENT_PREFIX.len()..].parse().unwrap_or(usize::MAX);
            let path = shell.state.lock().unwrap().recent.get(i).cloned();
            if let Some(p) = path {
                open_paths(app, vec![p]);
            }
        }
        _ if menu::PAGE_ACTIONS.contains(&id) => {
            // Only for a page that is there: a menu action is not worth keeping for later.
            if shell.page_ready.load(Ordering::SeqCst) {
                shell.call_page(app, "menu", &[id]);
            }
        }
        _ => {}
    }
}

/// File > Open: the system's file chooser, then the same path as every other way of opening.
fn show_open_dialog(app: &AppHandle) {
    let Some(window) = app.get_webview_window(MAIN) else { return };
    let start_dir = app.state::<Shell>().state.lock().unwrap().recent.first().and_then(|p| p.parent().map(Path::to_path_buf));
    let files = choose_files(&window, start_dir.as_deref());
    open_paths(app, files);
}

fn choose_files(window: &WebviewWindow, start_dir: Option<&Path>) -> Vec<PathBuf> {
    use gtk::prelude::*;
    let parent = window.gtk_window().ok();
    let dialog = gtk::FileChooserDialog::with_buttons(
        Some("Open a trace"),
        parent.as_ref(),
        gtk::FileChooserAction::Open,
        &[("_Cancel", gtk::ResponseType::Cancel), ("_Open", gtk::ResponseType::Accept)],
    );
    dialog.set_select_multiple(true);
    dialog.set_default_response(gtk::ResponseType::Accept);
    if let Some(d) = start_dir.filter(|d| d.is_dir()) {
        dialog.set_current_folder(d);
    }
    let traces = gtk::FileFilter::new();
    traces.set_name(Some("Traces (trace.dat, report and tracefs text, Perfetto; compressed too)"));
    traces.add_mime_type("application/x-trace-cmd-dat");
    for pattern in ["*.dat", "*.txt", "*.report", "*.trace", "*.pftrace", "*.perfetto-trace", "*.pb", "*.gz", "*.zst", "*.xz"] {
        traces.add_pattern(pattern);
    }
    dialog.add_filter(traces);
    let all = gtk::FileFilter::new();
    all.set_name(Some("All files"));
    all.add_pattern("*");
    dialog.add_filter(all);
    let chosen = if dialog.run() == gtk::ResponseType::Accept { dialog.filenames() } else { Vec::new() };
    unsafe { dialog.destroy() };
    chosen
}

/// The one command the page may call (allowed for the window's own server origin only).
#[tauri::command]
fn desktop_action(app: AppHandle, action: String) -> Result<(), String> {
    let shell = app.state::<Shell>();
    match action.as_str() {
        "ready" => {
            shell.page_ready.store(true, Ordering::SeqCst);
            let pending: Vec<String> = shell.pending_js.lock().unwrap().drain(..).collect();
            if let Some(w) = app.get_webview_window(MAIN) {
                for js in pending {
                    let _ = w.eval(js);
                }
            }
            Ok(())
        }
        "open-dialog" => {
            let a = app.clone();
            app.run_on_main_thread(move || show_open_dialog(&a)).map_err(|e| e.to_string())
        }
        other => Err(format!("unknown desktop action {other:?}")),
    }
}

impl Shell {
    /// Calls `window.stallscopeDesktop[method](...args)` on the page, now or once its bridge is ready.
    fn call_page(&self, app: &AppHandle, method: &str, args: &[&str]) {
        let args: Vec<String> = args.iter().map(|a| serde_json::to_string(a).unwrap()).collect();
        let js = format!("window.stallscopeDesktop && window.stallscopeDesktop.{method}({});", args.join(", "));
        if self.page_ready.load(Ordering::SeqCst) {
            if let Some(w) = app.get_webview_window(MAIN) {
                let _ = w.eval(js);
                return;
            }
        }
        self.pending_js.lock().unwrap().push(js);
    }

    fn remember_recent(&self, app: &AppHandle, path: &Path) {
        let mut st = self.state.lock().unwrap();
        st.add_recent(path);
        st.save(&self.config_dir);
        drop(st);
        self.refresh_recent_menu(app);
    }

    fn refresh_recent_menu(&self, app: &AppHandle) {
        let recent = self.state.lock().unwrap().recent.clone();
        if let Some(sub) = self.recent_menu.lock().unwrap().clone() {
            let a = app.clone();
            let _ = app.run_on_main_thread(move || {
                if let Err(e) = menu::fill_recent(&a, &sub, &recent) {
                    eprintln!("stallscope-desktop: {e}");
                }
            });
        }
    }

    fn geometry(app: &AppHandle) -> Option<Geometry> {
        let w = app.get_webview_window(MAIN)?;
        let scale = w.scale_factor().ok()?;
        let pos = w.outer_position().ok()?.to_logical::<f64>(scale);
        let size = w.inner_size().ok()?.to_logical::<f64>(scale);
        let maximized = w.is_maximized().unwrap_or(false);
        Some(Geometry { x: pos.x.round() as i32, y: pos.y.round() as i32, width: size.width.round() as u32, height: size.height.round() as u32, maximized })
    }

    /// After a move or resize, at most once a second (the last one is saved when the window closes).
    fn save_geometry_soon(&self, app: &AppHandle) {
        let mut last = self.geometry_saved.lock().unwrap();
        if last.elapsed() < Duration::from_secs(1) {
            return;
        }
        *last = Instant::now();
        drop(last);
        self.save_geometry_now(app);
    }

    fn save_geometry_now(&self, app: &AppHandle) {
        let Some(g) = Self::geometry(app) else { return };
        let mut st = self.state.lock().unwrap();
        // A maximized window keeps the size it returns to.
        if g.maximized {
            if let Some(old) = st.window.as_mut() {
                old.maximized = true;
            }
        } else {
            st.window = Some(g);
        }
        st.save(&self.config_dir);
    }
}
