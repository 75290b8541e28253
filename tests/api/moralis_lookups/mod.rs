//! The Moralis lookup routes, black-box on every backend: blocks and native balances against a
//! real chain (anvil, indexed by the real indexer), ERC20 metadata against the imported token
//! list, the utilities, and the 501 of every Moralis operation tokenql does not serve.

mod chain;
mod routes;
mod token_meta;

use chain::chain_lookups;
use routes::moralis_routes;
use token_meta::erc20_metadata;

crate::backend_tests!(chain_lookups, erc20_metadata, moralis_routes);
