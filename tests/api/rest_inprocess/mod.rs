//! In-process tests of the REST v2 routes: the whole application router driven with `oneshot`,
//! on a fresh SQLite file per test loaded with the bundled mainnet sample.
#![allow(clippy::unwrap_used)]

mod erc20;
mod errors;
mod nft;
mod support;
