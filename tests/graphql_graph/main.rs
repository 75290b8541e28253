//! The GraphQL graph, black-box (HTTP on port 0, a fresh database per test) on SQLite,
//! PostgreSQL and MariaDB: `wallet`, `token`, `nftCollection` and `nft`, every list walked to
//! its last page and checked against truth decoded in the test (`common::truth` for the demo
//! sample; hand-written logs for ERC1155 batches, burns and a token id of 2^256-1), and against
//! the REST v2.2 routes' answers to the same questions.
//!
//! - [`wallet`]: `Wallet.nfts`, `erc20Transfers`, `nftTransfers`, `nftCollections`,
//!   `tokenBalances` on the demo sample (orders, date and block bounds, filters, formats).
//! - [`entities`]: `token`, `nftCollection` and `nft` on the demo sample.
//! - [`synthetic`]: batches, burns, 2^256-1, exact balances, on hand-written logs.
//! - [`errors`]: every empty or malformed argument is an HTTP 400 `BAD_USER_INPUT` naming it.
//! - [`walk`]: the walker of nested connections and the field lists.

#[path = "../common/mod.rs"]
mod common;

mod entities;
mod errors;
mod synthetic;
mod walk;
mod wallet;

use entities::{nft_entry_point, token_and_collection_entry_points};
use errors::bad_input_is_400;
use synthetic::batches_burns_and_the_largest_token_id;
use wallet::{wallet_holdings_and_balances, wallet_transfers};

crate::backend_tests!(
    wallet_transfers,
    wallet_holdings_and_balances,
    token_and_collection_entry_points,
    nft_entry_point,
    batches_burns_and_the_largest_token_id,
    bad_input_is_400
);
