//! One HTTP(S) read: redirects followed by hand (each hop checked and limited like the first),
//! statuses classified, the body streamed under the size cap.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, LOCATION};
use reqwest::{Client, StatusCode, Url};

use super::hosts::HostLimits;
use super::{FetchError, Fetched};

/// Limits of one read.
pub(super) struct Limits {
    pub max_bytes: u64,
    pub max_redirects: usize,
    /// Per request (hop), from connection to last byte; waiting for a host slot is not counted.
    pub timeout: Duration,
}

/// What a status means for us.
pub(super) fn classify(status: StatusCode) -> Result<(), FetchError> {
    let code = status.as_u16();
    match code {
        200..=299 => Ok(()),
        408 | 425 | 429 | 500..=599 => Err(FetchError::Unavailable(format!("HTTP {code}"))),
        _ => Err(FetchError::NotFound(code)),
    }
}

/// A transport error, in our terms.
fn transport(e: &reqwest::Error) -> FetchError {
    if e.is_builder() {
        return FetchError::InvalidUrl("unusable URL".into());
    }
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_body() || e.is_decode() {
        "connection broke while reading"
    } else {
        "request failed"
    };
    FetchError::Unavailable(what.into())
}

/// The media type of a `Content-Type` value: lowercased, parameters dropped.
pub(super) fn media_type(v: &str) -> Option<String> {
    let t = v
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    (!t.is_empty()).then_some(t)
}

/// Reads `url`, following redirects by hand.
pub(super) async fn get(
    client: &Client,
    hosts: &HostLimits,
    url: Url,
    limits: &Limits,
) -> Result<Fetched, FetchError> {
    let mut seen = HashSet::new();
    let mut url = url;
    loop {
        if !seen.insert(url.clone()) || seen.len() > limits.max_redirects + 1 {
            return Err(FetchError::Redirects);
        }
        let host = url.host_str().unwrap_or_default().to_string();
        let _slot = hosts.acquire(&host).await;
        let hop = tokio::time::timeout(limits.timeout, one(client, &url, limits.max_bytes))
            .await
            .unwrap_or_else(|_| {
                Err(FetchError::Unavailable(format!(
                    "timed out after {:?}",
                    limits.timeout
                )))
            })?;
        match hop {
            Hop::Done(f) => return Ok(f),
            Hop::Redirect(location) => {
                let next = url
                    .join(&location)
                    .map_err(|_| FetchError::InvalidUrl("bad redirect location".into()))?;
                if !matches!(next.scheme(), "http" | "https") {
                    return Err(FetchError::InvalidUrl(format!(
                        "redirect to a {} URL",
                        next.scheme()
                    )));
                }
                url = next;
            }
        }
    }
}

enum Hop {
    Done(Fetched),
    Redirect(String),
}

async fn one(client: &Client, url: &Url, max_bytes: u64) -> Result<Hop, FetchError> {
    let mut resp = client
        .get(url.clone())
        .send()
        .await
        .map_err(|e| transport(&e))?;
    let status = resp.status();
    if status.is_redirection() {
        let location = resp
            .headers()
            .get(LOCATION)
            .and_then(|l| l.to_str().ok())
            .map(str::to_string);
        return match location {
            Some(l) if status != StatusCode::NOT_MODIFIED => Ok(Hop::Redirect(l)),
            _ => Err(FetchError::NotFound(status.as_u16())),
        };
    }
    classify(status)?;
    if resp.content_length().is_some_and(|n| n > max_bytes) {
        return Err(FetchError::TooLarge(max_bytes));
    }
    let content_type = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(media_type);
    let mut bytes = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| transport(&e))? {
        if (bytes.len() + chunk.len()) as u64 > max_bytes {
            return Err(FetchError::TooLarge(max_bytes));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Hop::Done(Fetched {
        bytes,
        content_type,
        final_url: url.to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        for code in [404u16, 410, 401, 403, 400, 418, 451] {
            let s = StatusCode::from_u16(code).unwrap_or(StatusCode::IM_A_TEAPOT);
            assert_eq!(classify(s), Err(FetchError::NotFound(code)), "{code}");
        }
        for code in [408u16, 425, 429, 500, 502, 503, 504, 599] {
            let s = StatusCode::from_u16(code).unwrap_or(StatusCode::IM_A_TEAPOT);
            assert!(
                classify(s).is_err_and(|e| e.is_transient()),
                "{code} is transient"
            );
        }
        assert_eq!(classify(StatusCode::OK), Ok(()));
        assert_eq!(classify(StatusCode::NO_CONTENT), Ok(()));
    }

    #[test]
    fn media_types() {
        assert_eq!(
            media_type("Application/JSON; charset=utf-8").as_deref(),
            Some("application/json")
        );
        assert_eq!(media_type("image/png").as_deref(), Some("image/png"));
        assert_eq!(media_type(" ; x=y"), None);
    }
}
