//! GraphQL over WebSocket on `GET /graphql`: the `graphql-transport-ws` protocol and the
//! older `graphql-ws` (async-graphql-axum serves both), for subscriptions (and queries).
//!
//! The API key comes in `connection_init`'s payload (`{"X-API-Key": "..."}`; browsers cannot
//! set headers on a WebSocket) or, failing that, in the upgrade request's `X-API-Key` header.
//! A missing or unknown key closes the connection: code `4403` (Forbidden) under
//! `graphql-transport-ws`, a `connection_error` message under `graphql-ws`.
//! Each subscription counts against its key's open subscriptions
//! ([`crate::app::live::LiveOptions::per_key`]).

use async_graphql::Data;
use async_graphql_axum::{GraphQLProtocol, GraphQLWebSocket};
use axum::extract::ws::{CloseFrame, Message, WebSocketUpgrade};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};

use super::Executor;
use crate::app::{authenticate, AppState};

/// Whether the request asks to become a WebSocket.
pub fn asks_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// Upgrades the request and serves GraphQL over the socket.
pub async fn serve(state: AppState, executor: Executor, parts: &mut Parts) -> Response {
    let protocol = match GraphQLProtocol::from_request_parts(parts, &state).await {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    let upgrade = match WebSocketUpgrade::from_request_parts(parts, &state).await {
        Ok(u) => u,
        Err(e) => return e.into_response(),
    };
    let headers = parts.headers.clone();
    let schema = executor.inner().clone();
    upgrade
        .protocols(async_graphql::http::ALL_WEBSOCKET_PROTOCOLS)
        .on_upgrade(move |socket| {
            let (sink, stream) = socket.split();
            let sink = sink.with(|m| std::future::ready(Ok::<_, axum::Error>(forbidden(m))));
            GraphQLWebSocket::new_with_pair(sink, stream, schema, protocol)
                .on_connection_init(move |payload| connection_data(state, headers, payload))
                .serve()
        })
}

/// The start of the reason of a connection refused for its key.
const FORBIDDEN: &str = "forbidden: ";

/// async-graphql closes a refused `graphql-transport-ws` connection with `1002`; the protocol
/// says `4403` for one refused for its credentials.
fn forbidden(m: Message) -> Message {
    match m {
        Message::Close(Some(frame))
            if frame.code == 1002 && frame.reason.starts_with(FORBIDDEN) =>
        {
            Message::Close(Some(CloseFrame {
                code: 4403,
                reason: frame.reason,
            }))
        }
        m => m,
    }
}

/// Authenticates the connection from `connection_init`'s payload (or the upgrade request's
/// header) and gives its requests what resolvers read.
async fn connection_data(
    state: AppState,
    mut headers: HeaderMap,
    payload: serde_json::Value,
) -> async_graphql::Result<Data> {
    if let Some(key) = key_in(&payload) {
        let value = HeaderValue::from_str(key).map_err(|_| {
            async_graphql::Error::new(format!(
                "{FORBIDDEN}the X-API-Key is not a valid header value"
            ))
        })?;
        headers.insert("x-api-key", value);
    }
    let caller = authenticate(&state, &headers)
        .await
        .map_err(|f| async_graphql::Error::new(format!("{FORBIDDEN}{}", f.message())))?;
    let mut data = Data::default();
    data.insert(caller);
    data.insert(state.live.clone());
    data.insert(super::objects::media::MediaBase(crate::app::preview_base(
        &state, &headers,
    )));
    data.insert(state.ops.options().chain_reads.clone());
    Ok(data)
}

/// The API key in a `connection_init` payload: `X-API-Key` in any letter case, at the top or
/// under `headers` (as some clients nest it).
fn key_in(payload: &serde_json::Value) -> Option<&str> {
    key_at(payload).or_else(|| key_at(payload.get("headers")?))
}

fn key_at(v: &serde_json::Value) -> Option<&str> {
    v.as_object()?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("x-api-key"))
        .and_then(|(_, v)| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_read_at_the_top_or_under_headers() {
        let top = serde_json::json!({"X-API-Key": "k1"});
        let nested = serde_json::json!({"headers": {"x-api-key": "k2"}});
        assert_eq!(key_in(&top), Some("k1"));
        assert_eq!(key_in(&nested), Some("k2"));
        assert_eq!(key_in(&serde_json::json!({})), None);
        assert_eq!(key_in(&serde_json::Value::Null), None);
    }
}
