//! Database server URLs, shared by the test harness and the benchmarks (`#[path]`-included).

/// `scheme://user@host:port[/db][?q]` -> (`scheme://user@host:port`, `?q` or "").
pub fn split_server_url(url: &str) -> (String, String) {
    let (url, query) = match url.split_once('?') {
        Some((u, q)) => (u, format!("?{q}")),
        None => (url, String::new()),
    };
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let server = match url[after_scheme..].find('/') {
        Some(i) => &url[..after_scheme + i],
        None => url,
    };
    (server.to_string(), query)
}
