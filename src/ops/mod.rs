//! Operations: what an operator needs around the API, wired in by [`crate::server`].
//!
//! - [`health`]: `GET /healthz` (liveness) and `GET /readyz` (database answers, migrations
//!   current).
//! - [`metrics`]: Prometheus series at `GET /metrics` (names and labels in
//!   [`crate::telemetry::metrics`]), and the HTTP metrics middleware.
//! - [`request_id`]: `x-request-id` in and out, and the per-request tracing span.
//!
//! The probes and `/metrics` need no API key. The per-request policies (keys, rate limits,
//! CORS) and the server's settings live in [`crate::app`].

pub mod health;
pub mod metrics;
pub mod request_id;
