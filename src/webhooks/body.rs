//! The body of a delivery, as Moralis Streams writes it (the `IWebhook` type of
//! `@moralisweb3/streams-typings`), and its signature: header `x-signature` =
//! `0x` + hex keccak256(body ++ secret), over the compact JSON sent.
//!
//! tokenql indexes token transfers only: `logs`, `txs`, `txsInternal`, the approvals and
//! `nativeBalances` are always empty, `abi` too. A removal (a reorg took the block away) is a
//! `confirmed: false` body with empty `erc20Transfers` and `nftTransfers` and an extra field,
//! `removed`, listing the transfers the reorg removed.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::plan::Delivery;
use crate::query::changes::ChangeKind;
use crate::query::{ContractInfo, Erc20Transfer, NftTransfer};
use crate::types::{Address, Chain, TokenStandard};

/// A delivery's body.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookBody {
    /// `true` once the block is buried under the chain's confirmations.
    pub confirmed: bool,
    /// The chain, as a hex id.
    pub chain_id: String,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub abi: Vec<Value>,
    /// The stream.
    pub stream_id: String,
    /// The stream's tag.
    pub tag: String,
    /// Earlier attempts of this delivery that failed.
    pub retries: u32,
    /// The block.
    pub block: BlockRef,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub logs: Vec<Value>,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub txs: Vec<Value>,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub txs_internal: Vec<Value>,
    /// The ERC20 transfers.
    pub erc20_transfers: Vec<Erc20Item>,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub erc20_approvals: Vec<Value>,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub nft_token_approvals: Vec<Value>,
    /// Always empty lists.
    pub nft_approvals: NftApprovals,
    /// The NFT moves.
    pub nft_transfers: Vec<NftItem>,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub native_balances: Vec<Value>,
    /// A removal's transfers (absent from other deliveries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed: Option<Removed>,
}

/// The block of a delivery; numbers as decimal strings.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BlockRef {
    /// Decimal.
    pub number: String,
    /// `0x` hex.
    pub hash: String,
    /// Unix seconds, decimal.
    pub timestamp: String,
}

/// The (always empty) NFT approvals.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct NftApprovals {
    /// Always empty.
    #[serde(rename = "ERC721")]
    #[schema(value_type = Vec<Object>)]
    pub erc721: Vec<Value>,
    /// Always empty.
    #[serde(rename = "ERC1155")]
    #[schema(value_type = Vec<Object>)]
    pub erc1155: Vec<Value>,
}

/// What a reorg removed.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Removed {
    /// ERC20 transfers removed.
    pub erc20_transfers: Vec<Erc20Item>,
    /// NFT moves removed.
    pub nft_transfers: Vec<NftItem>,
}

/// An ERC20 transfer (`IERC20Transfer`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Erc20Item {
    /// The transaction, `0x` hex.
    pub transaction_hash: String,
    /// Decimal.
    pub log_index: String,
    /// The token contract.
    pub contract: String,
    /// The sender.
    pub from: String,
    /// The receiver.
    pub to: String,
    /// Decimal base units.
    pub value: String,
    /// The token's name, `""` when not known (yet).
    pub token_name: String,
    /// The token's symbol, `""` when not known (yet).
    pub token_symbol: String,
    /// Decimal, `""` when unknown.
    pub token_decimals: String,
    /// `value` scaled by the decimals, when they are known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_with_decimals: Option<String>,
    /// Whether the contract is flagged as possible spam.
    pub possible_spam: bool,
}

/// An NFT move (`INFTTransfer`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NftItem {
    /// The transaction, `0x` hex.
    pub transaction_hash: String,
    /// Decimal.
    pub log_index: String,
    /// The token contract.
    pub contract: String,
    /// The sender.
    pub from: String,
    /// The receiver.
    pub to: String,
    /// Decimal.
    pub token_id: String,
    /// Decimal.
    pub amount: String,
    /// `ERC721` or `ERC1155`.
    pub token_contract_type: String,
    /// The token's name, `""` when not known (yet).
    pub token_name: String,
    /// The token's symbol, `""` when not known (yet).
    pub token_symbol: String,
    /// `null` for ERC721.
    pub operator: Option<String>,
    /// Whether the contract is flagged as possible spam.
    pub possible_spam: bool,
}

/// Contracts' metadata, by address.
pub type Metadata = HashMap<Address, ContractInfo>;

fn erc20_item(t: &Erc20Transfer, meta: &Metadata) -> Erc20Item {
    let info = meta.get(&t.contract);
    let decimals = info.and_then(|i| i.decimals);
    Erc20Item {
        transaction_hash: t.transaction_hash.clone(),
        log_index: t.log_index.to_string(),
        contract: t.contract.to_string(),
        from: t.from.to_string(),
        to: t.to.to_string(),
        value: t.value.to_decimal(),
        token_name: info.and_then(|i| i.name.clone()).unwrap_or_default(),
        token_symbol: info.and_then(|i| i.symbol.clone()).unwrap_or_default(),
        token_decimals: decimals.map(|d| d.to_string()).unwrap_or_default(),
        value_with_decimals: decimals.map(|d| t.value.to_decimal_scaled(d)),
        possible_spam: info.is_some_and(|i| i.possible_spam),
    }
}

fn nft_item(t: &NftTransfer, meta: &Metadata) -> NftItem {
    let info = meta.get(&t.contract);
    NftItem {
        transaction_hash: t.transaction_hash.clone(),
        log_index: t.log_index.to_string(),
        contract: t.contract.to_string(),
        from: t.from.to_string(),
        to: t.to.to_string(),
        token_id: t.token_id.to_decimal(),
        amount: t.amount.to_decimal(),
        token_contract_type: match t.contract_type {
            TokenStandard::Erc1155 => "ERC1155",
            _ => "ERC721",
        }
        .to_string(),
        token_name: info.and_then(|i| i.name.clone()).unwrap_or_default(),
        token_symbol: info.and_then(|i| i.symbol.clone()).unwrap_or_default(),
        operator: t.operator.map(|o| o.to_string()),
        possible_spam: info.is_some_and(|i| i.possible_spam),
    }
}

/// Who a body is for: the stream and its chain.
#[derive(Debug, Clone, Copy)]
pub struct Addressee<'a> {
    /// The stream's id.
    pub stream_id: &'a str,
    /// The stream's tag.
    pub tag: &'a str,
    /// The chain.
    pub chain: Chain,
}

/// The body of delivery `d`, attempt `retries + 1`.
pub fn body(to: Addressee<'_>, d: &Delivery, meta: &Metadata, retries: u32) -> WebhookBody {
    let erc20: Vec<Erc20Item> = d.erc20.iter().map(|t| erc20_item(t, meta)).collect();
    let nft: Vec<NftItem> = d.nft.iter().map(|t| nft_item(t, meta)).collect();
    let (erc20_transfers, nft_transfers, removed) = match d.kind {
        ChangeKind::Removed => (
            Vec::new(),
            Vec::new(),
            Some(Removed {
                erc20_transfers: erc20,
                nft_transfers: nft,
            }),
        ),
        _ => (erc20, nft, None),
    };
    WebhookBody {
        confirmed: d.kind == ChangeKind::Confirmed,
        chain_id: to.chain.hex_id(),
        abi: Vec::new(),
        stream_id: to.stream_id.to_string(),
        tag: to.tag.to_string(),
        retries,
        block: BlockRef {
            number: d.block_number.to_string(),
            hash: d.block_hash.clone(),
            timestamp: d.block_timestamp.to_string(),
        },
        logs: Vec::new(),
        txs: Vec::new(),
        txs_internal: Vec::new(),
        erc20_transfers,
        erc20_approvals: Vec::new(),
        nft_token_approvals: Vec::new(),
        nft_approvals: NftApprovals::default(),
        nft_transfers,
        native_balances: Vec::new(),
        removed,
    }
}

/// The `x-signature` of `body` (the exact bytes sent) under `secret`.
pub fn signature(body: &[u8], secret: &str) -> String {
    let mut data = Vec::with_capacity(body.len() + secret.len());
    data.extend_from_slice(body);
    data.extend_from_slice(secret.as_bytes());
    crate::types::hex::lower0x(alloy::primitives::keccak256(&data).as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_keccak_of_body_and_secret() {
        // keccak256("") is the well-known c5d2…a470.
        assert_eq!(
            signature(b"", ""),
            "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
        );
        assert_ne!(signature(b"{}", "a"), signature(b"{}", "b"));
    }
}
