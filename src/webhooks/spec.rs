//! A stream's settings at the boundary: the JSON bodies of the management routes parsed into
//! typed values ([`StreamSpec`], [`StreamPatch`], [`Topics`]), and the stream as the API shows
//! it ([`StreamView`], Moralis's `StreamsModel`). Every refusal names the field it is about.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::decode::{TRANSFER_BATCH_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_TOPIC};
use crate::store::streams::Stream;
use crate::types::{Address, Chain};

/// Why an input was refused: the field, as the API spells it, and the rule it broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadInput {
    /// The field.
    pub field: &'static str,
    /// The rule it broke (safe to show).
    pub rule: String,
}

fn bad(field: &'static str, rule: impl Into<String>) -> BadInput {
    BadInput {
        field,
        rule: rule.into(),
    }
}

/// What a stream cannot do in tokenql, which indexes token transfer events only.
pub const TRANSFERS_ONLY: &str = "tokenql indexes token transfer events only (Transfer, \
TransferSingle, TransferBatch): native and internal transactions, other events and their ABI \
decoding are not served";

/// The three transfer events tokenql indexes, with their signatures.
const EVENTS: [(&str, i16); 3] = [
    ("Transfer(address,address,uint256)", Topics::TRANSFER),
    (
        "TransferSingle(address,address,address,uint256,uint256)",
        Topics::TRANSFER_SINGLE,
    ),
    (
        "TransferBatch(address,address,address,uint256[],uint256[])",
        Topics::TRANSFER_BATCH,
    ),
];

/// The transfer events a stream delivers (none named: all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Topics(pub i16);

impl Topics {
    /// `Transfer`: ERC20 transfers and ERC721 moves.
    pub const TRANSFER: i16 = 1;
    /// ERC1155 `TransferSingle`.
    pub const TRANSFER_SINGLE: i16 = 2;
    /// ERC1155 `TransferBatch`.
    pub const TRANSFER_BATCH: i16 = 4;

    /// Parses `topic0`: event signatures (`Transfer(address,address,uint256)`) or their hashes.
    pub fn parse(items: &[Value]) -> Result<Self, BadInput> {
        let mut bits = 0;
        for item in items {
            let text = item
                .as_str()
                .ok_or_else(|| bad("topic0", "expected a list of strings"))?;
            bits |= topic_bit(text).ok_or_else(|| {
                bad(
                    "topic0",
                    format!("'{text}' is not a transfer event; {TRANSFERS_ONLY}"),
                )
            })?;
        }
        Ok(Self(bits))
    }

    /// Whether the stream delivers events of any of `bit`'s bits.
    pub fn has(&self, bit: i16) -> bool {
        self.0 == 0 || self.0 & bit != 0
    }

    /// The signatures named, as the API echoes them.
    pub fn signatures(&self) -> Vec<&'static str> {
        EVENTS
            .iter()
            .filter(|(_, b)| self.0 & b != 0)
            .map(|(s, _)| *s)
            .collect()
    }
}

fn topic_bit(text: &str) -> Option<i16> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let hashes = [TRANSFER_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC];
    EVENTS
        .iter()
        .zip(hashes)
        .find(|((sig, _), hash)| {
            *sig == compact || crate::types::hex::lower0x(hash.as_slice()) == compact.to_lowercase()
        })
        .map(|((_, bit), _)| *bit)
}

/// A new stream's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamSpec {
    /// Where deliveries go (`http` or `https`).
    pub webhook_url: String,
    /// The owner's description.
    pub description: String,
    /// Sent back in every delivery.
    pub tag: String,
    /// The events delivered.
    pub topics: Topics,
    /// Echoed back.
    pub include_contract_logs: bool,
    /// Every address.
    pub all_addresses: bool,
    /// The chains delivered.
    pub chains: Vec<Chain>,
}

/// An update: the fields given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StreamPatch {
    /// New webhook URL.
    pub webhook_url: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// New tag.
    pub tag: Option<String>,
    /// New events.
    pub topics: Option<Topics>,
    /// New flag.
    pub include_contract_logs: Option<bool>,
    /// New flag.
    pub all_addresses: Option<bool>,
    /// New chains.
    pub chains: Option<Vec<Chain>>,
}

/// The JSON object of a body, or why not.
pub fn object(body: &[u8]) -> Result<Map<String, Value>, BadInput> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(bad("body", "expected a JSON object")),
        Err(e) => Err(bad("body", format!("not JSON: {e}"))),
    }
}

fn text(m: &Map<String, Value>, field: &'static str) -> Result<Option<String>, BadInput> {
    match m.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.len() <= 2_000 => Ok(Some(s.clone())),
        Some(Value::String(_)) => Err(bad(field, "longer than 2000 characters")),
        Some(_) => Err(bad(field, "expected a string")),
    }
}

fn flag(m: &Map<String, Value>, field: &'static str) -> Result<Option<bool>, BadInput> {
    match m.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(bad(field, "expected true or false")),
    }
}

fn url(text: String) -> Result<String, BadInput> {
    let parsed = reqwest::Url::parse(&text)
        .map_err(|e| bad("webhookUrl", format!("'{text}' is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(bad("webhookUrl", format!("'{text}' is not an http(s) URL")));
    }
    Ok(text)
}

fn chains(m: &Map<String, Value>) -> Result<Option<Vec<Chain>>, BadInput> {
    let Some(v) = m.get("chainIds").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let items = v.as_array().filter(|a| !a.is_empty()).ok_or_else(|| {
        bad(
            "chainIds",
            "expected a non-empty list of chain ids such as \"0x1\"",
        )
    })?;
    let mut out = Vec::new();
    for item in items {
        let s = item
            .as_str()
            .ok_or_else(|| bad("chainIds", "expected a list of strings"))?;
        let chain = Chain::parse(s).map_err(|e| bad("chainIds", e.0))?;
        if !out.contains(&chain) {
            out.push(chain);
        }
    }
    Ok(Some(out))
}

/// Refuses what tokenql does not index: native and internal transactions, balances, all logs,
/// and ABIs of other events than the transfer events.
fn transfers_only(m: &Map<String, Value>) -> Result<(), BadInput> {
    for field in ["includeNativeTxs", "includeInternalTxs", "includeAllTxLogs"] {
        if matches!(m.get(field), Some(Value::Bool(true))) {
            return Err(bad(field, TRANSFERS_ONLY));
        }
    }
    if m.get("getNativeBalances")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        return Err(bad("getNativeBalances", TRANSFERS_ONLY));
    }
    match m.get("abi") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(items)) if items.iter().all(is_transfer_abi) => Ok(()),
        Some(_) => Err(bad("abi", TRANSFERS_ONLY)),
    }
}

fn is_transfer_abi(item: &Value) -> bool {
    item.get("type").and_then(Value::as_str) == Some("event")
        && matches!(
            item.get("name").and_then(Value::as_str),
            Some("Transfer" | "TransferSingle" | "TransferBatch")
        )
}

/// Parses an update body (`POST /streams/evm/{id}`): every field optional.
pub fn parse_patch(m: &Map<String, Value>) -> Result<StreamPatch, BadInput> {
    transfers_only(m)?;
    let topics = match m.get("topic0") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(Topics::parse(items)?),
        Some(_) => return Err(bad("topic0", "expected a list of event signatures")),
    };
    Ok(StreamPatch {
        webhook_url: text(m, "webhookUrl")?.map(url).transpose()?,
        description: text(m, "description")?,
        tag: text(m, "tag")?,
        topics,
        include_contract_logs: flag(m, "includeContractLogs")?,
        all_addresses: flag(m, "allAddresses")?,
        chains: chains(m)?,
    })
}

/// Parses a creation body (`PUT /streams/evm`): `webhookUrl` and `chainIds` required.
pub fn parse_spec(m: &Map<String, Value>) -> Result<StreamSpec, BadInput> {
    let p = parse_patch(m)?;
    Ok(StreamSpec {
        webhook_url: p.webhook_url.ok_or_else(|| bad("webhookUrl", "required"))?,
        description: p.description.unwrap_or_default(),
        tag: p.tag.unwrap_or_default(),
        topics: p.topics.unwrap_or_default(),
        include_contract_logs: p.include_contract_logs.unwrap_or(false),
        all_addresses: p.all_addresses.unwrap_or(false),
        chains: p.chains.ok_or_else(|| bad("chainIds", "required"))?,
    })
}

/// Parses `address`: one address or a list of them.
pub fn parse_addresses(m: &Map<String, Value>) -> Result<Vec<Address>, BadInput> {
    let items: Vec<&Value> = match m.get("address") {
        Some(Value::Array(a)) if !a.is_empty() && a.len() <= 10_000 => a.iter().collect(),
        Some(Value::Array(_)) => {
            return Err(bad("address", "expected 1 to 10000 addresses"));
        }
        Some(v @ Value::String(_)) => vec![v],
        None | Some(Value::Null) => return Err(bad("address", "required")),
        Some(_) => return Err(bad("address", "expected an address or a list of addresses")),
    };
    items
        .into_iter()
        .map(|v| {
            let s = v
                .as_str()
                .ok_or_else(|| bad("address", "expected a list of strings"))?;
            Address::parse(s).map_err(|e| bad("address", e.0))
        })
        .collect()
}

/// The body of `PUT /streams/evm` and `POST /streams/evm/{id}` (for the document; the routes
/// parse bodies with [`parse_spec`] and [`parse_patch`]). Creation needs `webhookUrl` and
/// `chainIds`; an update takes any of the fields.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = StreamsTypesStreamsModelCreate)]
pub struct StreamInput {
    /// Where deliveries are posted: an `http` or `https` URL.
    pub webhook_url: String,
    /// A description for the owner.
    pub description: Option<String>,
    /// Sent back in every delivery.
    pub tag: Option<String>,
    /// The transfer events delivered: `Transfer(address,address,uint256)`,
    /// `TransferSingle(address,address,address,uint256,uint256)`,
    /// `TransferBatch(address,address,address,uint256[],uint256[])` (signatures or hashes);
    /// none: all three. Any other event is a 400.
    pub topic0: Option<Vec<String>>,
    /// Deliver every transfer, whatever its addresses.
    pub all_addresses: Option<bool>,
    /// Echoed back (a contract among the addresses matches its transfers regardless).
    pub include_contract_logs: Option<bool>,
    /// Must be `false` or absent: tokenql indexes token transfers only.
    pub include_native_txs: Option<bool>,
    /// Must be `false` or absent.
    pub include_internal_txs: Option<bool>,
    /// Must be `false` or absent.
    pub include_all_tx_logs: Option<bool>,
    /// Must be empty or absent.
    #[schema(value_type = Option<Vec<Object>>)]
    pub get_native_balances: Option<Vec<Value>>,
    /// Events of the transfer ABI only (`Transfer`, `TransferSingle`, `TransferBatch`).
    #[schema(value_type = Option<Vec<Object>>)]
    pub abi: Option<Vec<Value>>,
    /// The chains delivered: hex ids (`0x1`) or names.
    pub chain_ids: Vec<String>,
}

/// The body of `POST /streams/evm/{id}/status`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct StatusInput {
    /// `active` (resumes a stream in `error` where it stopped) or `paused`.
    pub status: String,
}

/// The body of `POST` and `DELETE /streams/evm/{id}/address`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct AddressInput {
    /// One address, or a list of up to 10,000.
    #[schema(value_type = Object)]
    pub address: Value,
}

/// The body of `POST /settings`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsInput {
    /// The new signing secret: 8 to 256 characters (absent: kept).
    pub secret_key: Option<String>,
}

/// A stream as the API shows it (Moralis's `StreamsModel`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = StreamsModel)]
pub struct StreamView {
    /// Where deliveries go.
    pub webhook_url: String,
    /// The owner's description.
    pub description: String,
    /// Sent back in every delivery.
    pub tag: String,
    /// The transfer events delivered (empty: all three).
    #[schema(value_type = Vec<String>)]
    pub topic0: Vec<&'static str>,
    /// Every address.
    pub all_addresses: bool,
    /// Always `false`.
    pub include_native_txs: bool,
    /// As given.
    pub include_contract_logs: bool,
    /// Always `false`.
    pub include_internal_txs: bool,
    /// Always `false`.
    pub include_all_tx_logs: bool,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub get_native_balances: Vec<Value>,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub abi: Vec<Value>,
    /// Always `null`.
    #[schema(value_type = Option<Object>)]
    pub advanced_options: Option<Value>,
    /// The chains delivered, as hex ids.
    pub chain_ids: Vec<String>,
    /// The stream id.
    pub id: String,
    /// `active`, `paused` or `error`.
    #[schema(value_type = String)]
    pub status: &'static str,
    /// Why the stream is in `error`.
    pub status_message: String,
    /// How many addresses the stream watches.
    pub amount_of_addresses: u64,
}

impl StreamView {
    /// The view of `s`, which watches `addresses` addresses.
    pub fn of(s: &Stream, addresses: u64) -> Self {
        Self {
            webhook_url: s.webhook_url.clone(),
            description: s.description.clone(),
            tag: s.tag.clone(),
            topic0: Topics(s.topics).signatures(),
            all_addresses: s.all_addresses,
            include_native_txs: false,
            include_contract_logs: s.include_contract_logs,
            include_internal_txs: false,
            include_all_tx_logs: false,
            get_native_balances: Vec::new(),
            abi: Vec::new(),
            advanced_options: None,
            chain_ids: s
                .chains
                .iter()
                .filter_map(|c| u64::try_from(*c).ok().and_then(Chain::from_id))
                .map(|c| c.hex_id())
                .collect(),
            id: s.id.clone(),
            status: s.status.as_str(),
            status_message: s.status_message.clone(),
            amount_of_addresses: addresses,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn topics_accept_the_transfer_events_only() {
        let t = Topics::parse(&[json!("Transfer(address, address, uint256)")]);
        assert_eq!(t, Ok(Topics(Topics::TRANSFER)));
        let hash = crate::types::hex::lower0x(TRANSFER_SINGLE_TOPIC.as_slice());
        assert_eq!(
            Topics::parse(&[json!(hash)]),
            Ok(Topics(Topics::TRANSFER_SINGLE))
        );
        let e = Topics::parse(&[json!("Approval(address,address,uint256)")]);
        assert!(e.is_err_and(|e| e.field == "topic0" && e.rule.contains("transfer events only")));
    }

    #[test]
    fn a_spec_needs_a_url_and_chains_and_refuses_what_is_not_indexed() {
        let ok = parse_spec(&map(json!({
            "webhookUrl": "http://127.0.0.1:9/hook", "chainIds": ["0x1"], "tag": "t"
        })));
        assert!(ok.is_ok_and(|s| s.chains == [Chain::ETH] && s.tag == "t"));
        let field = |v: Value| parse_spec(&map(v)).err().map(|e| e.field);
        assert_eq!(field(json!({"chainIds": ["0x1"]})), Some("webhookUrl"));
        assert_eq!(
            field(json!({"webhookUrl": "ftp://x", "chainIds": ["0x1"]})),
            Some("webhookUrl")
        );
        assert_eq!(
            field(json!({"webhookUrl": "http://x", "chainIds": []})),
            Some("chainIds")
        );
        assert_eq!(
            field(json!({"webhookUrl": "http://x", "chainIds": ["0x1"], "includeNativeTxs": true})),
            Some("includeNativeTxs")
        );
        assert_eq!(
            field(json!({"webhookUrl": "http://x", "chainIds": ["0x1"],
                         "abi": [{"type": "event", "name": "Approval"}]})),
            Some("abi")
        );
    }

    #[test]
    fn addresses_are_one_or_a_list() {
        let one = "0x00000000000000000000000000000000000000aa";
        assert_eq!(
            parse_addresses(&map(json!({"address": one}))).map(|a| a.len()),
            Ok(1)
        );
        assert_eq!(
            parse_addresses(&map(json!({"address": [one, one]}))).map(|a| a.len()),
            Ok(2)
        );
        assert!(parse_addresses(&map(json!({"address": "nope"}))).is_err());
        assert!(parse_addresses(&map(json!({}))).is_err());
    }
}
