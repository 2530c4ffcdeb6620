//! Share links the desktop app opens: `stallscope://open/?trace=<sha256>&...`
//! (what "Copy link" writes when no team server is set) and a team server's
//! `http(s)://host/?trace=<sha256>&...`. Only the view is taken from a link
//! (its query and fragment); its host is never contacted: the trace is looked
//! up by content hash in this machine's library, and the app offers to open
//! the file when it is not there.

/// A link's view, to open on the window's own server.
#[derive(Debug, PartialEq)]
pub struct LinkView {
    /// The trace's sha256.
    pub trace: String,
    /// The query without `?` and without any `token` (never carried over).
    pub query: String,
    /// The fragment without `#` (notes carried in the link), possibly empty.
    pub fragment: String,
}

/// Is this command-line argument a link rather than a file?
pub fn looks_like_link(arg: &str) -> bool {
    let lower = arg.to_ascii_lowercase();
    lower.starts_with("stallscope:") || lower.starts_with("http://") || lower.starts_with("https://")
}

/// The view a link names, or why it names none.
pub fn parse_link(link: &str) -> Result<LinkView, String> {
    if link.len() > 64 * 1024 {
        return Err(format!("the link is {} characters long: no stallscope link is that long", link.len()));
    }
    if !looks_like_link(link) {
        return Err("not a stallscope link (stallscope://... or http(s)://...?trace=...)".into());
    }
    let (before_hash, fragment) = match link.split_once('#') {
        Some((a, b)) => (a, b),
        None => (link, ""),
    };
    let query = before_hash.split_once('?').map(|(_, q)| q).unwrap_or("");
    let mut trace = None;
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let key = pair.split('=').next().unwrap_or("");
        match key {
            "token" => continue,
            "trace" => {
                let v = &pair[key.len()..].trim_start_matches('=');
                trace = Some(v.to_ascii_lowercase());
            }
            _ => {}
        }
        kept.push(pair);
    }
    let trace = trace.ok_or("the link names no trace (no ?trace=)")?;
    if trace.len() != 64 || !trace.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("the link's trace is not a sha256 (64 hex digits)".into());
    }
    Ok(LinkView { trace, query: kept.join("&"), fragment: fragment.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn a_stallscope_link_keeps_its_view_and_fragment() {
        let v = parse_link(&format!("stallscope://open/?trace={SHA}&t0=5&t1=9&sel=finding:3#n=abc")).unwrap();
        assert_eq!(v.trace, SHA);
        assert_eq!(v.query, format!("trace={SHA}&t0=5&t1=9&sel=finding:3"));
        assert_eq!(v.fragment, "n=abc");
    }

    #[test]
    fn a_team_server_link_loses_its_host_and_any_token() {
        let v = parse_link(&format!("https://stalls.example.org/?token=secret&trace={}&pin=cpu:1", SHA.to_uppercase())).unwrap();
        assert_eq!(v.trace, SHA);
        assert_eq!(v.query, format!("trace={}&pin=cpu:1", SHA.to_uppercase()));
        assert_eq!(v.fragment, "");
    }

    #[test]
    fn links_without_a_sha256_are_refused() {
        assert!(parse_link("https://example.org/?trace=abc").is_err());
        assert!(parse_link("https://example.org/").is_err());
        assert!(parse_link("/home/me/trace.dat").is_err());
        assert!(!looks_like_link("/home/me/trace.dat"));
        assert!(looks_like_link("STALLSCOPE://open/?trace=1"));
    }
}
