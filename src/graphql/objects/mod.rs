//! The schema's objects, one module each. Each is built from the query service's model types
//! and answers its fields from its page's finished answer ([`crate::query::Answer`]).
//!
//! - [`query`]: the `Query` root: the flat `nftsByWallet` and `erc20Transfers`, and the entry
//!   points of the graph `wallet`, `token`, `nftCollection`, `nft`.
//! - [`wallet`] (`Wallet`), [`token`] (`Token`), [`balances`] (`TokenBalance`),
//!   [`collection`] (`NftCollection`), [`collection_meta`] (a collection's metadata fields,
//!   shared by `NftCollection`, an NFT's fields and `NftTransfer`), [`wallet_collections`]
//!   (`WalletCollection`), [`collection_nfts`] (`CollectionNft`), [`collection_traits`]
//!   (`NftTrait`), [`nft_token`] (`NftToken`), [`nft_fields`] (an NFT's own fields, part of
//!   `NftToken` and `CollectionNft`, and what a page's tokens share), [`nft`] (`Nft`, a
//!   holding), [`transfer`] (`Erc20Transfer`), [`nft_transfer`] (`NftTransfer`), [`event_fields`]
//!   (the parties and log fields both transfer records share),
//!   [`transfer_fields`] (the transfer list fields of `Wallet`, `Token`, `NftCollection` and
//!   `NftToken`, with their arguments declared once), [`media`] (`NftMedia`), [`stats`]
//!   (counts and activity, and a collection's distinct holders);
//!   [`subscription`] (the `Subscription` root: live
//!   `erc20Transfers` and `nftTransfers`, over WebSocket).

pub mod balances;
pub mod collection;
pub mod collection_meta;
pub mod collection_nfts;
pub mod collection_traits;
pub mod event_fields;
pub mod media;
pub mod nft;
pub mod nft_fields;
pub mod nft_token;
pub mod nft_transfer;
pub mod query;
pub mod stats;
pub mod subscription;
pub mod token;
pub mod transfer;
pub mod transfer_fields;
pub mod wallet;
pub mod wallet_collections;
