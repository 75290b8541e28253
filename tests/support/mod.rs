//! The one support tree of the integration tests. Every test binary (`tests/api`, `tests/chain`,
//! `tests/ops`) includes it the same way, `#[path = "../support/mod.rs"] mod support;`, and its
//! suites reach it as `crate::support::…`. Each binary uses a part of it.
//!
//! - [`common`]: the black-box harness (fresh database, server on port 0, API key), the
//!   per-backend `backend_tests!` macro, the demo's ground truth, the `tokenql` binary.
//! - [`anvil`]: a real local chain (anvil) and the contracts deployed on it.
//! - [`erc20_holders`]: a token's holders computed from decoded transfers, and the checks of
//!   the token owners and stats routes against them.
//! - [`as_of`]: holdings as of a block replayed from decoded moves, and the checks of every
//!   holdings question as of a block (REST and GraphQL) against them.
//! - [`indexer`]: the indexer run in process or as a process against anvil, and chain reads.
//! - [`history`]: the history-on-demand suite's scene, truth and checks.
//! - [`proxy`]: a fault-injecting JSON-RPC proxy in front of anvil.
//! - [`offchain`]: the local web / IPFS / Arweave server the off-chain workers fetch from.
//! - [`graphql`]: the in-process GraphQL harness (schema on a fresh demo database).
//! - [`live`]: a GraphQL-over-WebSocket client (`graphql-transport-ws`, `graphql-ws`).
//! - [`pg`]: PostgreSQL primary + streaming replica started from the server programs.
//! - [`validator`]: the small JSON Schema validator of the OpenAPI document's subset.
//! - [`webhooks`]: a webhook receiver that verifies Moralis's `x-signature`.
//!
//! Files under here may also be `#[path]`-included by `benches/`: they name their siblings with
//! `super::`, never `crate::`.
#![allow(dead_code)]

pub mod anvil;
pub mod as_of;
pub mod common;
pub mod erc20_holders;
pub mod graphql;
pub mod history;
pub mod indexer;
pub mod live;
pub mod offchain;
pub mod pg;
pub mod proxy;
pub mod validator;
pub mod webhooks;
