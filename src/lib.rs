//! tokenql: index EVM chains and answer, fast and exactly, *which NFTs does this wallet own?*
//! and *which ERC20 transfers touched these wallets or contracts?* — over GraphQL and over REST
//! routes compatible with the Moralis Web3 Data API v2.
//!
//! # A tour of the layout, in the order data flows
//!
//! chain → [`decode`] → [`store`] → database ([`entity`], `migration/`) → [`query`] →
//! [`graphql`] / [`rest`]
//!
//! - [`types`]: boundary types (`Address`, `Chain`, `Uint256`, `PageSize`, …). User input is
//!   parsed into these once, at the edge.
//! - [`decode`]: raw logs to typed transfer events — the one decoder.
//! - [`store`]: the write path (batched, idempotent, one transaction per batch).
//! - [`indexer`]: follows each configured chain over JSON-RPC, backfills collections on
//!   demand, handles reorgs; writes through [`store`].
//! - [`import`]: loads recorded logs, block headers and token lists through the write path.
//! - [`lists`]: spam lists, verified allow-lists, address labels, token lists, the spam
//!   heuristics and the admin's per-contract overrides.
//! - [`entity`]: sea-orm models; internal, never API types.
//! - [`query`]: the query service, the one implementation of both questions.
//! - [`graphql`], [`rest`]: the two API adapters over the query service.
//! - [`webhooks`]: streams compatible with Moralis Streams: their management (behind
//!   `rest::streams`) and the worker that delivers the change feed to webhook URLs.
//! - [`app`]: the state every handler shares, auth (API keys, rate limits, CORS) and where a
//!   request's reads go; below the adapters, knowing none of them.
//! - [`server`]: the one route list and [`run`]`(listener, shutdown)`.
//! - [`startup`]: what each `tokenql` subcommand does; `main` only parses and dispatches.
//! - [`keys`]: API keys (stored hashed), each with an optional rate limit.
//! - [`ops`]: health and readiness probes, Prometheus metrics, request ids (CORS and rate
//!   limits are in [`app`]).

// No function in `src/` runs over 80 lines (`clippy.toml`); the migrations are their own crate.
#![warn(clippy::too_many_lines)]

pub mod app;
pub mod decode;
pub mod demo;
pub mod entity;
pub mod graphql;
pub mod import;
pub mod indexer;
pub mod keys;
pub mod lists;
pub mod offchain;
pub mod ops;
pub mod query;
pub mod rest;
pub mod server;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod tls;
pub mod types;
pub mod webhooks;

pub use app::AppState;
pub use server::run;
