//! Walking a connection nested anywhere in a query, field lists of the node types, and the
//! checks every walk makes.

use serde_json::Value;

use crate::support::common::{gql_str, TestApp};

/// Every scalar field of `Erc20Transfer`.
pub const ERC20_FIELDS: &str = "contractAddress fromWallet toWallet fromWalletLabel \
    toWalletLabel value valueDecimal blockNumber blockHash blockTimestamp transactionHash \
    transactionIndex logIndex tokenName tokenSymbol tokenLogo tokenDecimals possibleSpam \
    verifiedCollection";

/// Every scalar field of `NftTransfer`.
pub const MOVE_FIELDS: &str = "tokenAddress tokenId contractType fromWallet toWallet \
    fromWalletLabel toWalletLabel operator amount blockNumber blockHash blockTimestamp \
    transactionHash transactionIndex logIndex batchIndex name symbol possibleSpam \
    verifiedCollection";

/// The scalar fields of `Nft` (a holding) the tests compare.
pub const HOLDING_FIELDS: &str = "tokenAddress tokenId contractType ownerOf amount blockNumber \
    blockNumberMinted tokenHash name symbol possibleSpam verifiedCollection";

/// The largest token id, in decimal.
pub const MAX: &str =
    "115792089237316195423570985008687907853269984665640564039457584007913129639935";

/// A connection's selection: `status`, `pageInfo` and `edges { cursor node { fields } }`.
pub fn conn(fields: &str) -> String {
    format!(
        "{{ status pageInfo {{ hasNextPage hasPreviousPage startCursor endCursor }} \
         edges {{ cursor node {{ {fields} }} }} }}"
    )
}

/// `name(first: .., after: .., args)`: a list field with its arguments.
pub fn call(name: &str, first: usize, after: &str, args: &str) -> String {
    let mut a = vec![format!("first: {first}")];
    if !after.is_empty() {
        a.push(after.to_string());
    }
    if !args.is_empty() {
        a.push(args.to_string());
    }
    format!("{name}({})", a.join(", "))
}

/// `wallet(address: ..) { <list>(..) <selection> }`.
pub fn wallet_list(
    wallet: &str,
    list: &str,
    first: usize,
    after: &str,
    args: &str,
    fields: &str,
) -> String {
    format!(
        "{{ wallet(address: {}) {{ {} {} }} }}",
        gql_str(wallet),
        call(list, first, after, args),
        conn(fields)
    )
}

/// Everything a walk saw.
#[derive(Debug, Default)]
pub struct Walked {
    pub nodes: Vec<Value>,
    /// `status` of each page.
    pub statuses: Vec<String>,
}

impl Walked {
    /// Every page said `SYNCED`.
    pub fn assert_synced(&self, what: &str) {
        assert!(
            self.statuses.iter().all(|s| s == "SYNCED"),
            "{what}: statuses {:?}",
            self.statuses
        );
    }

    /// The pages: how many there were.
    pub fn pages(&self) -> usize {
        self.statuses.len()
    }
}

/// The value at `path` (field names) in `v`.
pub fn at<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(v, |v, k| &v[*k])
}

/// Follows `pageInfo.endCursor` of the connection at `path` in the data of `build(after)`
/// (`after` is `""` on the first page, `after: "..."` after it) to the last page. On every
/// page: HTTP 200 without errors; at most `first` edges, each with a cursor; `startCursor`
/// and `endCursor` those of the first and last edges; `hasPreviousPage` after the first page;
/// a full page whenever `hasNextPage`.
pub async fn walk(
    app: &TestApp,
    path: &[&str],
    first: usize,
    build: impl Fn(&str) -> String,
) -> Walked {
    let mut walked = Walked::default();
    let mut after = String::new();
    loop {
        let q = build(&after);
        let data = app.graphql_ok(&q, Value::Null).await;
        let c = at(&data, path);
        let edges = c["edges"]
            .as_array()
            .unwrap_or_else(|| panic!("{path:?}: no edges: {data}\nquery: {q}"));
        assert!(edges.len() <= first, "{path:?}: more than {first} edges");
        let cursors: Vec<&str> = edges
            .iter()
            .map(|e| {
                e["cursor"]
                    .as_str()
                    .filter(|c| !c.is_empty())
                    .unwrap_or_else(|| panic!("{path:?}: edge without a cursor: {e}"))
            })
            .collect();
        let info = &c["pageInfo"];
        assert_eq!(
            info["startCursor"].as_str(),
            cursors.first().copied(),
            "{path:?}: {info}"
        );
        assert_eq!(
            info["endCursor"].as_str(),
            cursors.last().copied(),
            "{path:?}: {info}"
        );
        assert_eq!(
            info["hasPreviousPage"],
            !walked.statuses.is_empty(),
            "{path:?}: {info}"
        );
        walked
            .statuses
            .push(c["status"].as_str().unwrap_or("?").to_string());
        walked.nodes.extend(edges.iter().map(|e| e["node"].clone()));
        if info["hasNextPage"] != true {
            return walked;
        }
        assert_eq!(
            edges.len(),
            first,
            "{path:?}: a page before the last is full"
        );
        after = format!("after: {}", gql_str(cursors[cursors.len() - 1]));
        assert!(walked.statuses.len() < 500, "{path:?}: no end in sight");
    }
}

/// The text of a JSON value: strings as they are, numbers written out, `null` as `None`.
pub fn s(v: &Value) -> Option<String> {
    crate::support::common::text(v)
}

/// A token id (64 hex digits, no prefix) as `0x` hex without leading zeros.
pub fn short_hex(id_hex: &str) -> String {
    let digits = id_hex.trim_start_matches('0');
    format!("0x{}", if digits.is_empty() { "0" } else { digits })
}
