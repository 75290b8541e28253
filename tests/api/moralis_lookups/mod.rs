//! The Moralis lookup routes, black-box on every backend: blocks and native balances against a
//! real chain (anvil, indexed by the real indexer), ERC20 metadata against the imported token
//! list, the utilities, and the 501 of every Moralis operation tokenql does not serve.

mod chain;
mod collections;
mod routes;
mod token_meta;

use crate::support::common::TestApp;
use chain::chain_lookups;
use collections::nft_and_wallet_lookups;
use routes::moralis_routes;
use token_meta::erc20_metadata;

crate::backend_tests!(
    chain_lookups,
    erc20_metadata,
    moralis_routes,
    nft_and_wallet_lookups
);

/// `GET uri` must answer `status` with a `{"message"}` containing `mention`.
async fn refused(app: &TestApp, uri: &str, status: u16, mention: &str) {
    let (got, _, body) = app.get_rest(uri).await;
    assert_eq!(got, status, "{uri}: {body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(message.contains(mention), "{uri}: {body}");
}
