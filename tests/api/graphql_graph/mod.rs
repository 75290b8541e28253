//! The GraphQL graph, black-box (HTTP on port 0, a fresh database per test) on SQLite,
//! PostgreSQL and MariaDB: `wallet`, `token`, `nftCollection` and `nft`, every list walked to
//! its last page and checked against truth decoded in the test (`common::truth` for the demo
//! sample; hand-written logs for ERC1155 batches, burns and a token id of 2^256-1), and against
//! the REST v2.2 routes' answers to the same questions.
//!
//! - [`wallet`]: `Wallet.erc20Transfers` and `nftTransfers` on the demo sample (orders, date
//!   and block bounds, filters, formats, labels); [`holdings`]: `Wallet.nfts`,
//!   `nftCollections` and `tokenBalances`.
//! - [`entities`]: `token` and `nftCollection`; [`nft`]: `nft`, on the demo sample.
//! - [`synthetic`], [`synthetic_holdings`]: batches, burns, 2^256-1, exact balances, on
//!   hand-written logs.
//! - [`errors`]: every empty or malformed argument is an HTTP 400 `BAD_USER_INPUT` naming it;
//!   with nothing indexed, no list says `SYNCED`.
//! - [`walk`]: the walker of nested connections and the field lists; [`checks`]: a node
//!   against its truth, a list against REST.

mod checks;
mod entities;
mod errors;
mod holdings;
mod nft;
mod synthetic;
mod synthetic_holdings;
mod walk;
mod wallet;

use entities::token_and_collection_entry_points;
use errors::{bad_input_is_400, nothing_indexed_yet_says_syncing};
use holdings::wallet_holdings_and_balances;
use nft::nft_entry_point;
use synthetic::batches_burns_and_the_largest_token_id;
use wallet::wallet_transfers;

crate::backend_tests!(
    wallet_transfers,
    wallet_holdings_and_balances,
    token_and_collection_entry_points,
    nft_entry_point,
    batches_burns_and_the_largest_token_id,
    bad_input_is_400,
    nothing_indexed_yet_says_syncing
);
