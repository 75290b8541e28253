//! A GraphQL-over-WebSocket client for the live suites and benchmarks: the
//! `graphql-transport-ws` protocol and the older `graphql-ws` (Apollo's), one subscription
//! per connection, every message it receives kept in order.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// Which WebSocket sub-protocol a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `graphql-transport-ws` (graphql-ws, the library).
    TransportWs,
    /// `graphql-ws` (subscriptions-transport-ws, Apollo's older protocol).
    LegacyWs,
}

impl Protocol {
    fn name(self) -> &'static str {
        match self {
            Protocol::TransportWs => "graphql-transport-ws",
            Protocol::LegacyWs => "graphql-ws",
        }
    }
}

/// What a subscription received.
#[derive(Debug, Clone, Default)]
pub struct Received {
    /// The `data` of each result, in order, with the instant it arrived.
    pub data: Vec<(Instant, Value)>,
    /// Errors sent by the server (in results or as `error` messages).
    pub errors: Vec<Value>,
    /// Whether the server completed the subscription or closed the socket.
    pub ended: bool,
    /// The close frame's code, when the server closed the socket.
    pub close_code: Option<u16>,
}

/// One open subscription.
pub struct Subscription {
    pub received: Arc<Mutex<Received>>,
    reader: JoinHandle<()>,
}

impl Subscription {
    /// Opens `query` (with `variables`) at `ws_url` (`ws://host:port/graphql`), authenticated by
    /// `key` in `connection_init`. Returns once the server acknowledged the connection and
    /// the subscription was sent; an `Err` with the server's close code or error otherwise.
    pub async fn open(
        ws_url: &str,
        key: Option<&str>,
        protocol: Protocol,
        query: &str,
        variables: Value,
    ) -> Result<Subscription, Received> {
        let mut req = ws_url.into_client_request().expect("a WebSocket URL");
        req.headers_mut().insert(
            "sec-websocket-protocol",
            protocol.name().parse().expect("header"),
        );
        let (mut ws, _) = tokio_tungstenite::connect_async(req)
            .await
            .expect("WebSocket connect");
        let payload = key.map_or(json!({}), |k| json!({ "X-API-Key": k }));
        let init = json!({"type": "connection_init", "payload": payload});
        ws.send(Message::text(init.to_string()))
            .await
            .expect("send init");
        let mut failed = Received::default();
        loop {
            match tokio::time::timeout(Duration::from_secs(20), ws.next()).await {
                Ok(Some(Ok(Message::Text(t)))) => {
                    let v: Value = serde_json::from_str(&t).expect("JSON message");
                    match v["type"].as_str() {
                        Some("connection_ack") => break,
                        Some("ka") | Some("ping") => continue,
                        _ => {
                            failed.errors.push(v);
                            failed.ended = true;
                            return Err(failed);
                        }
                    }
                }
                Ok(Some(Ok(Message::Close(frame)))) => {
                    failed.close_code = frame.map(|f| u16::from(f.code));
                    failed.ended = true;
                    return Err(failed);
                }
                Ok(Some(Ok(_))) => continue,
                other => {
                    failed.errors.push(json!(format!("{other:?}")));
                    failed.ended = true;
                    return Err(failed);
                }
            }
        }
        let start = match protocol {
            Protocol::TransportWs => "subscribe",
            Protocol::LegacyWs => "start",
        };
        let msg =
            json!({"id": "1", "type": start, "payload": {"query": query, "variables": variables}});
        ws.send(Message::text(msg.to_string()))
            .await
            .expect("send subscribe");
        let received = Arc::new(Mutex::new(Received::default()));
        let into = received.clone();
        let reader = tokio::spawn(async move {
            while let Some(msg) = ws.next().await {
                let Ok(msg) = msg else { break };
                match msg {
                    Message::Text(t) => {
                        let v: Value = serde_json::from_str(&t).expect("JSON message");
                        let mut r = into.lock().expect("received");
                        match v["type"].as_str() {
                            Some("next") | Some("data") => {
                                if let Some(errors) = v["payload"]["errors"].as_array() {
                                    r.errors.extend(errors.iter().cloned());
                                }
                                if !v["payload"]["data"].is_null() {
                                    r.data.push((Instant::now(), v["payload"]["data"].clone()));
                                }
                            }
                            Some("error") => r.errors.push(v["payload"].clone()),
                            Some("complete") => r.ended = true,
                            Some("ping") => {
                                drop(r);
                                let pong = json!({"type": "pong"}).to_string();
                                let _ = ws.send(Message::text(pong)).await;
                            }
                            _ => {}
                        }
                    }
                    Message::Close(frame) => {
                        let mut r = into.lock().expect("received");
                        r.close_code = frame.map(|f| u16::from(f.code));
                        r.ended = true;
                        break;
                    }
                    _ => {}
                }
            }
            into.lock().expect("received").ended = true;
        });
        Ok(Subscription { received, reader })
    }

    /// A copy of what arrived so far.
    pub fn snapshot(&self) -> Received {
        self.received.lock().expect("received").clone()
    }

    /// Waits until `done` holds for what arrived, or `limit` passes; returns what arrived.
    pub async fn until(&self, limit: Duration, done: impl Fn(&Received) -> bool) -> Received {
        let deadline = Instant::now() + limit;
        loop {
            let r = self.snapshot();
            if done(&r) || Instant::now() > deadline {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Drops the connection (no goodbye), as a client that goes away does.
    pub fn disconnect(self) -> Received {
        self.reader.abort();
        self.snapshot()
    }
}

/// `ws://…/graphql` of an `http://…` base URL.
pub fn ws_url(base: &str) -> String {
    format!("{}/graphql", base.replacen("http://", "ws://", 1))
}
