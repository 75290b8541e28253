//! A local web server for the off-chain suites: metadata documents, images of known sizes,
//! failures of every kind, an IPFS gateway and an Arweave gateway — all generated in-process,
//! on 127.0.0.1 and a free port.
//!
//! Routes (`OffchainServer::base_url()` + path):
//!
//! - `/meta/{case}` — a metadata document per [`CASES`] entry (`/meta/png` names `/img/png`
//!   as its image, …), see [`document`]; `/meta/{n}` with a decimal `n` is the `n`-th case
//!   (1-based, [`token_id`]), so a TestNFT deployed with base URI `{base}/meta/` serves every
//!   case by token id. Special cases: `invalid` (not JSON), `notfound` (404), `slowdoc` (sleeps
//!   [`OffchainServer::set_slow`]), `loopdoc` (302 to itself), `redirect` (one 302 to
//!   `/meta/png`), `flaky` (503 while [`OffchainServer::set_flaky`] is on, then the png
//!   document), `array` (a JSON array, not an object).
//! - `/meta1155/{64 hex}.json` — an ERC1155 document naming its id ([`document_1155`]); any
//!   other file name is a 404.
//! - `/doc/{name}` — `{"name": "doc {name}"}`, for any name.
//! - `/img/png` ([`PNG_SIZE`]), `/img/jpeg` ([`JPEG_SIZE`]), `/img/gif` (animated,
//!   [`GIF_FRAMES`] frames of [`GIF_SIZE`]), `/img/svg` (viewBox [`SVG_SIZE`], no width/height),
//!   `/img/big` ([`BIG_BYTES`] streamed with `Content-Length`), `/img/big-chunked` (the same
//!   without `Content-Length`), `/img/slow` (sleeps, then the PNG), `/img/missing` (404),
//!   `/img/loop` (302 → `/img/loop2` → 302 → `/img/loop`), `/img/text` (`text/plain`),
//!   `/img/error` (500).
//! - `/ipfs/{cid}/{path…}` — a gateway: serves `/{path…}` of this server (so
//!   `ipfs://Qm…/meta/png` through gateway `base_url()` is the png document); `/ipfs/{cid}`
//!   alone is the png document.
//! - `/ar/{txid}` — an Arweave gateway (`arweave_gateway = base_url() + "/ar"`): the document
//!   of case `txid`.
//! - Anything set with [`OffchainServer::put`] / [`OffchainServer::put_status`] overrides the
//!   above.
//!
//! Every request is counted by path ([`OffchainServer::hits`]).
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Cursor;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, Response, StatusCode, Uri};
use serde_json::{json, Value};
use tokio::task::JoinHandle;

/// Width × height of `/img/png`.
pub const PNG_SIZE: (u32, u32) = (640, 480);
/// Width × height of `/img/jpeg`.
pub const JPEG_SIZE: (u32, u32) = (300, 1200);
/// Width × height of each frame of `/img/gif`.
pub const GIF_SIZE: (u32, u32) = (200, 100);
/// Frames of `/img/gif`.
pub const GIF_FRAMES: usize = 2;
/// The viewBox size of `/img/svg` (it has no width/height attributes).
pub const SVG_SIZE: (u32, u32) = (120, 60);
/// Length of `/img/big` and `/img/big-chunked`.
pub const BIG_BYTES: u64 = 50 * 1024 * 1024;
/// The text of `/img/text`.
pub const TEXT_BODY: &str = "this is not an image\n";

/// The metadata cases, in token-id order (`/meta/1` is `png`).
pub const CASES: &[&str] = &[
    "png", "jpeg", "gif", "svg", "big", "slow", "missing", "loop", "noimage", "badurl", "textfile",
    "invalid", "notfound", "slowdoc", "loopdoc", "redirect", "flaky", "array",
];

/// The token id serving `case` under base URI `{base}/meta/`.
pub fn token_id(case: &str) -> u64 {
    CASES
        .iter()
        .position(|c| *c == case)
        .unwrap_or_else(|| panic!("no metadata case {case}")) as u64
        + 1
}

/// The image path a case's document names (`None`: no image field).
pub fn image_path(case: &str) -> Option<&'static str> {
    Some(match case {
        "png" | "redirect" | "flaky" => "/img/png",
        "jpeg" => "/img/jpeg",
        "gif" => "/img/gif",
        "svg" => "/img/svg",
        "big" => "/img/big",
        "slow" => "/img/slow",
        "missing" => "/img/missing",
        "loop" => "/img/loop",
        "textfile" => "/img/text",
        _ => return None,
    })
}

/// The metadata document of a (JSON-object) case, as served under `base`.
pub fn document(base: &str, case: &str) -> Value {
    let target = if matches!(case, "redirect" | "flaky") {
        "png"
    } else {
        case
    };
    let mut doc = json!({
        "name": format!("Case {target}"),
        "description": format!("The {target} case of the off-chain test server."),
        "external_url": format!("{base}/about/{target}"),
        "attributes": [
            {"trait_type": "Case", "value": target},
            {"trait_type": "Level", "value": 3, "display_type": "number", "max_value": 10},
            {"display_type": "date", "trait_type": "Born", "value": 1_700_000_000},
        ],
    });
    match image_path(case) {
        Some(p) => doc["image"] = json!(format!("{base}{p}")),
        None if case == "badurl" => doc["image"] = json!("not a url"),
        None => {}
    }
    doc
}

/// The ERC1155 document served at `/meta1155/{hex_id}.json`.
pub fn document_1155(base: &str, hex_id: &str) -> Value {
    json!({
        "name": format!("Multi {hex_id}"),
        "description": "An ERC1155 token of the off-chain test server.",
        "image": format!("{base}/img/png"),
        "properties": {"id": hex_id, "rarity": {"name": "Rarity", "value": "common"}},
    })
}

/// The images, made once.
struct Images {
    png: Vec<u8>,
    jpeg: Vec<u8>,
    gif: Vec<u8>,
    svg: Vec<u8>,
}

fn gradient(w: u32, h: u32) -> image::RgbImage {
    image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([
            (x * 255 / w) as u8,
            (y * 255 / h) as u8,
            ((x + y) % 256) as u8,
        ])
    })
}

fn encode(img: image::RgbImage, format: image::ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut out, format)
        .expect("encode a test image");
    out.into_inner()
}

fn images() -> &'static Images {
    static IMAGES: OnceLock<Images> = OnceLock::new();
    IMAGES.get_or_init(|| {
        let mut gif = Vec::new();
        {
            let mut enc = image::codecs::gif::GifEncoder::new(&mut gif);
            enc.set_repeat(image::codecs::gif::Repeat::Infinite)
                .expect("gif repeat");
            let frames = (0..GIF_FRAMES).map(|i| {
                let img = image::RgbaImage::from_fn(GIF_SIZE.0, GIF_SIZE.1, |x, _| {
                    let on = (x / 20 + i as u32) % 2 == 0;
                    image::Rgba(if on { [255, 0, 0, 255] } else { [0, 0, 255, 255] })
                });
                image::Frame::from_parts(
                    img,
                    0,
                    0,
                    image::Delay::from_numer_denom_ms(200, 1),
                )
            });
            enc.encode_frames(frames).expect("encode the gif");
        }
        let svg = format!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}"><rect x="0" y="0" width="{w}" height="{h}" fill="#3060c0"/><circle cx="30" cy="30" r="20" fill="#f0c020"/></svg>"##,
            w = SVG_SIZE.0,
            h = SVG_SIZE.1
        );
        Images {
            png: encode(gradient(PNG_SIZE.0, PNG_SIZE.1), image::ImageFormat::Png),
            jpeg: encode(gradient(JPEG_SIZE.0, JPEG_SIZE.1), image::ImageFormat::Jpeg),
            gif,
            svg: svg.into_bytes(),
        }
    })
}

/// The bytes of `/img/png`.
pub fn png_bytes() -> &'static [u8] {
    &images().png
}

/// The bytes of `/img/svg`.
pub fn svg_bytes() -> &'static [u8] {
    &images().svg
}

/// A canned answer: status, content type, body.
type Canned = (u16, String, Vec<u8>);

struct State {
    base: String,
    hits: Mutex<HashMap<String, u64>>,
    total: AtomicU64,
    flaky: AtomicBool,
    slow_ms: AtomicU64,
    /// How long `/doc/*` waits before answering (default 0).
    doc_delay_ms: AtomicU64,
    overrides: Mutex<HashMap<String, Canned>>,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    /// Bytes of `/img/big*` produced so far.
    streamed: Arc<AtomicU64>,
}

/// The running server; stops when dropped.
pub struct OffchainServer {
    state: Arc<State>,
    task: JoinHandle<()>,
}

impl OffchainServer {
    /// Starts the server on 127.0.0.1 and a free port (and installs the process's rustls
    /// provider, so the test's own reqwest clients can be built).
    pub async fn start() -> OffchainServer {
        tokenql::tls::ensure_crypto_provider();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the off-chain test server");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(State {
            base: format!("http://{addr}"),
            hits: Mutex::new(HashMap::new()),
            total: AtomicU64::new(0),
            flaky: AtomicBool::new(true),
            slow_ms: AtomicU64::new(5_000),
            doc_delay_ms: AtomicU64::new(0),
            overrides: Mutex::new(HashMap::new()),
            in_flight: AtomicU64::new(0),
            max_in_flight: AtomicU64::new(0),
            streamed: Arc::new(AtomicU64::new(0)),
        });
        let s = state.clone();
        let app = axum::Router::new().fallback(move |uri: Uri| {
            let s = s.clone();
            async move { handle(&s, &uri).await }
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        OffchainServer { state, task }
    }

    /// `http://127.0.0.1:PORT`
    pub fn base_url(&self) -> &str {
        &self.state.base
    }

    /// `{base}{path}`
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.state.base)
    }

    /// Requests received for `path` (without the query string).
    pub fn hits(&self, path: &str) -> u64 {
        self.state
            .hits
            .lock()
            .expect("hits")
            .get(path)
            .copied()
            .unwrap_or(0)
    }

    /// Requests received in all.
    pub fn total_hits(&self) -> u64 {
        self.state.total.load(Ordering::SeqCst)
    }

    /// While on (the default), `/meta/flaky` answers 503; off, it serves the png document.
    pub fn set_flaky(&self, failing: bool) {
        self.state.flaky.store(failing, Ordering::SeqCst);
    }

    /// How long `/doc/*` waits before answering (default: not at all).
    pub fn set_doc_delay(&self, d: Duration) {
        self.state
            .doc_delay_ms
            .store(d.as_millis() as u64, Ordering::SeqCst);
    }

    /// How long `/img/slow` and `/meta/slowdoc` sleep (default 5 s).
    pub fn set_slow(&self, d: Duration) {
        self.state
            .slow_ms
            .store(d.as_millis() as u64, Ordering::SeqCst);
    }

    /// Serves `body` with `content_type` at `path` (200), overriding any route.
    pub fn put(&self, path: &str, content_type: &str, body: impl Into<Vec<u8>>) {
        self.state.overrides.lock().expect("overrides").insert(
            path.to_string(),
            (200, content_type.to_string(), body.into()),
        );
    }

    /// Answers `code` (with a text body) at `path`, overriding any route.
    pub fn put_status(&self, path: &str, code: u16) {
        self.state.overrides.lock().expect("overrides").insert(
            path.to_string(),
            (
                code,
                "text/plain".into(),
                format!("HTTP {code}").into_bytes(),
            ),
        );
    }

    /// Drops what [`Self::put`] and [`Self::put_status`] set at `path`.
    pub fn unput(&self, path: &str) {
        self.state.overrides.lock().expect("overrides").remove(path);
    }

    /// The most requests this server has been answering at one moment (sleeping ones
    /// included; a streamed body counts until its headers are sent).
    pub fn max_in_flight(&self) -> u64 {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }

    /// Bytes of `/img/big` and `/img/big-chunked` handed to the connection so far (a client
    /// that stops reading stops this at about its socket buffers).
    pub fn streamed_bytes(&self) -> u64 {
        self.state.streamed.load(Ordering::SeqCst)
    }

    /// Starts [`Self::max_in_flight`] over.
    pub fn reset_max_in_flight(&self) {
        self.state.max_in_flight.store(0, Ordering::SeqCst);
    }
}

impl Drop for OffchainServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn respond(status: StatusCode, content_type: &str, body: impl Into<Body>) -> Response<Body> {
    let mut r = Response::new(body.into());
    *r.status_mut() = status;
    if let Ok(v) = HeaderValue::from_str(content_type) {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    r
}

fn ok(content_type: &str, body: impl Into<Body>) -> Response<Body> {
    respond(StatusCode::OK, content_type, body)
}

fn status(code: StatusCode) -> Response<Body> {
    respond(code, "text/plain", code.to_string())
}

fn redirect(to: &str) -> Response<Body> {
    let mut r = status(StatusCode::FOUND);
    if let Ok(v) = HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

fn json_doc(v: &Value) -> Response<Body> {
    ok("application/json; charset=utf-8", v.to_string())
}

/// A PNG-looking body of [`BIG_BYTES`], streamed in 64 KiB chunks.
fn big(with_length: bool, streamed: Arc<AtomicU64>) -> Response<Body> {
    const CHUNK: usize = 64 * 1024;
    let chunks = (BIG_BYTES as usize).div_ceil(CHUNK);
    let stream = futures_util::stream::iter((0..chunks).map(move |i| {
        streamed.fetch_add(CHUNK as u64, Ordering::SeqCst);
        let mut c = vec![0u8; CHUNK];
        if i == 0 {
            c[..8].copy_from_slice(b"\x89PNG\r\n\x1a\n");
        }
        Ok::<_, std::io::Error>(Bytes::from(c))
    }));
    let mut r = ok("image/png", Body::from_stream(stream));
    if with_length {
        r.headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(BIG_BYTES));
    }
    r
}

async fn handle(s: &State, uri: &Uri) -> Response<Body> {
    let path = uri.path().to_string();
    s.total.fetch_add(1, Ordering::SeqCst);
    *s.hits
        .lock()
        .expect("hits")
        .entry(path.clone())
        .or_default() += 1;
    let now = s.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    s.max_in_flight.fetch_max(now, Ordering::SeqCst);
    // Decremented however the request ends (a client that gives up drops this future).
    struct Leave<'a>(&'a AtomicU64);
    impl Drop for Leave<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let _leave = Leave(&s.in_flight);
    route(s, &path).await
}

async fn route(s: &State, path: &str) -> Response<Body> {
    if let Some((code, ct, body)) = s.overrides.lock().expect("overrides").get(path).cloned() {
        let code = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return respond(code, &ct, body);
    }
    let slow = Duration::from_millis(s.slow_ms.load(Ordering::SeqCst));
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segs.as_slice() {
        ["meta", name] => meta(s, name, slow).await,
        ["meta1155", file] => match file.strip_suffix(".json") {
            Some(id) if id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit()) => {
                json_doc(&document_1155(&s.base, id))
            }
            _ => status(StatusCode::NOT_FOUND),
        },
        ["img", name] => img(s, name, slow).await,
        ["doc", name] => {
            let delay = s.doc_delay_ms.load(Ordering::SeqCst);
            if delay > 0 {
                tokio::time::sleep(Duration::from_millis(delay)).await;
            }
            json_doc(&json!({"name": format!("doc {name}")}))
        }
        ["ipfs", _cid] => meta(s, "png", slow).await,
        ["ipfs", _cid, rest @ ..] => Box::pin(route(s, &format!("/{}", rest.join("/")))).await,
        ["ar", txid] => meta(s, txid, slow).await,
        _ => status(StatusCode::NOT_FOUND),
    }
}

async fn meta(s: &State, name: &str, slow: Duration) -> Response<Body> {
    let name = match name.parse::<usize>() {
        Ok(n) if (1..=CASES.len()).contains(&n) => CASES[n - 1],
        Ok(_) => return status(StatusCode::NOT_FOUND),
        Err(_) => name,
    };
    match name {
        "invalid" => ok("application/json", "{\"name\": \"broken\", "),
        "notfound" => status(StatusCode::NOT_FOUND),
        "array" => json_doc(&json!([{"name": "not an object"}])),
        "slowdoc" => {
            tokio::time::sleep(slow).await;
            json_doc(&document(&s.base, "png"))
        }
        "loopdoc" => redirect("/meta/loopdoc"),
        "redirect" => redirect("/meta/png"),
        "flaky" if s.flaky.load(Ordering::SeqCst) => status(StatusCode::SERVICE_UNAVAILABLE),
        n if CASES.contains(&n) => json_doc(&document(&s.base, n)),
        _ => status(StatusCode::NOT_FOUND),
    }
}

async fn img(s: &State, name: &str, slow: Duration) -> Response<Body> {
    let i = images();
    match name {
        "png" => ok("image/png", i.png.clone()),
        "jpeg" => ok("image/jpeg", i.jpeg.clone()),
        "gif" => ok("image/gif", i.gif.clone()),
        "svg" => ok("image/svg+xml", i.svg.clone()),
        "big" => big(true, s.streamed.clone()),
        "big-chunked" => big(false, s.streamed.clone()),
        "slow" => {
            tokio::time::sleep(slow).await;
            ok("image/png", i.png.clone())
        }
        "loop" => redirect("/img/loop2"),
        "loop2" => redirect("/img/loop"),
        "text" => ok("text/plain; charset=utf-8", TEXT_BODY),
        "error" => status(StatusCode::INTERNAL_SERVER_ERROR),
        _ => status(StatusCode::NOT_FOUND),
    }
}
