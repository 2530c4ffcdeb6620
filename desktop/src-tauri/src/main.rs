//! stallscope's desktop window: a Tauri shell around the same React app and
//! server as the web app.
//!
//! At start the shell launches its own `stallscope serve --desktop` on a free
//! loopback port (server.rs), hands it a fresh token over a pipe, and points
//! the window at it with `?token=` so the first page load turns the token
//! into the server's HttpOnly cookie. Files reach the server by path over
//! the same pipe (File > Open, Open Recent, a drop, the command line):
//! never through an HTTP route. Closing the window ends the pipe, and with
//! it the server; so does a crash of this process.
//!
//! `stallscope-desktop [FILE | stallscope://... | http(s)://...?trace=...]...`

mod links;
mod menu;
mod server;
mod shell;
mod single;
mod state;

fn main() {
    shell::run();
}
