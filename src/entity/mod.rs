//! sea-orm models of the tables created by `migration/`. They stay inside the crate: the APIs
//! build their own types from them (see `query::model`). Addresses, uint256 values and token
//! standards are typed columns ([`values`]): read as the boundary types, never parsed back later.
pub mod address_label;
pub mod api_key;
pub mod block;
pub mod chain_state;
pub mod change_feed;
pub mod contract;
pub mod erc20_balance;
pub mod erc20_token_total;
pub mod erc20_transfer;
pub mod indexer_lease;
pub mod nft_holding;
pub mod nft_media;
pub mod nft_token;
pub mod nft_transfer;
pub mod scope_sync;
pub mod setting;
pub mod stream;
pub mod stream_address;
pub mod stream_position;
mod values;
