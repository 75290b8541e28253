//! A webhook receiver for black-box tests: an axum server on port 0 that checks `x-signature`
//! the way Moralis's SDK does (`keccak256(JSON.stringify(body) + secret)`, the parsed body
//! written again compactly, keys in their order) and records what it accepted. It can be taken
//! down (every request answered 500) and brought back.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use serde_json::Value;

/// What the receiver saw.
#[derive(Default)]
pub struct Inbox {
    /// Bodies accepted, in arrival order.
    pub accepted: Vec<Value>,
    /// The same, as received: body text and `x-signature`.
    pub raw: Vec<(String, String)>,
    /// Requests whose signature did not verify.
    pub bad_signatures: usize,
}

struct Shared {
    inbox: Mutex<Inbox>,
    secret: Mutex<String>,
    down: AtomicBool,
    refused: AtomicUsize,
}

/// A running receiver; stops on drop.
pub struct Receiver {
    /// `http://127.0.0.1:PORT/hook`
    pub url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

/// `JSON.stringify(JSON.parse(text))` for JSON text: whitespace outside strings dropped, keys
/// kept in their order (serde_json's `Value` would sort them).
pub fn stringify(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_str, mut escaped) = (false, false);
    for c in text.chars() {
        if in_str {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
        } else if !c.is_whitespace() {
            if c == '"' {
                in_str = true;
            }
            out.push(c);
        }
    }
    out
}

/// Moralis's `verifySignature`: `0x` + hex keccak256(JSON.stringify(body) + secret).
pub fn signature_of(text: &str, secret: &str) -> String {
    let data = format!("{}{secret}", stringify(text));
    let hash = alloy::primitives::keccak256(data.as_bytes());
    format!("0x{}", alloy::primitives::hex::encode(hash))
}

async fn hook(State(s): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    if s.down.load(Ordering::SeqCst) {
        s.refused.fetch_add(1, Ordering::SeqCst);
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    let text = String::from_utf8_lossy(&body).to_string();
    let Ok(parsed) = serde_json::from_str::<Value>(&text) else {
        return StatusCode::BAD_REQUEST;
    };
    let secret = s.secret.lock().expect("secret").clone();
    let given = headers
        .get("x-signature")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let json_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let mut inbox = s.inbox.lock().expect("inbox");
    if given != signature_of(&text, &secret) || !json_type {
        inbox.bad_signatures += 1;
        return StatusCode::UNAUTHORIZED;
    }
    inbox.accepted.push(parsed);
    inbox.raw.push((text, given.to_string()));
    StatusCode::OK
}

impl Receiver {
    /// Starts a receiver that verifies with `secret`.
    pub async fn start(secret: &str) -> Receiver {
        let shared = Arc::new(Shared {
            inbox: Mutex::new(Inbox::default()),
            secret: Mutex::new(secret.to_string()),
            down: AtomicBool::new(false),
            refused: AtomicUsize::new(0),
        });
        let app = Router::new()
            .route("/hook", post(hook))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the receiver");
        let addr = listener.local_addr().expect("address");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            url: format!("http://{addr}/hook"),
            shared,
            task,
        }
    }

    /// Answers 500 to everything (`true`) or accepts again.
    pub fn set_down(&self, down: bool) {
        self.shared.down.store(down, Ordering::SeqCst);
    }

    /// Requests answered 500 while down.
    pub fn refused(&self) -> usize {
        self.shared.refused.load(Ordering::SeqCst)
    }

    /// The bodies accepted so far as received: text and signature.
    pub fn raw(&self) -> Vec<(String, String)> {
        self.shared.inbox.lock().expect("inbox").raw.clone()
    }

    /// The bodies accepted so far and the bad signatures.
    pub fn snapshot(&self) -> (Vec<Value>, usize) {
        let inbox = self.shared.inbox.lock().expect("inbox");
        (inbox.accepted.clone(), inbox.bad_signatures)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}
