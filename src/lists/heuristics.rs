//! Transparent spam rules on a contract's name and symbol. Each rule has a stable reason string
//! (shown by `tokenql contract show`, listed in the README); a contract matching any rule is
//! flagged `possible_spam` with source `heuristic` unless a list or an admin decided its flag.
//!
//! | reason | matches (letter case ignored) |
//! |---|---|
//! | `url` | a link: `http://`, `https://`, `www.`, `t.me/` |
//! | `domain` | a domain with a top-level domain from [`TLDS`] (`usdt-claim.com`) in the symbol, or in the name next to a lure word ([`LURES`]) or `$` |
//! | `call-to-action` | `visit`; or `claim`, `redeem`, `activate` after `to` or before `at`, `on`, `via`, `now`, `your`, `here`, `free`, `reward(s)`, `airdrop`, `bonus`, `token(s)` |
//! | `giveaway` | `airdrop`, `reward(s)`, `bonus`, `giveaway`, `gift`, `voucher` with `$`, `!` or an amount of 3+ digits (`5,000`) |
//! | `invisible-characters` | zero-width, bidirectional-control and other invisible characters |
//!
//! The rules are deliberately narrow: a legitimate token named after its website
//! (`Shopping.io`), a DeFi name (`Curve.fi DAI/USDC/USDT`, `yearn.finance`), a contract such as
//! `Convex Finance: Claim Zap` or a name such as `StakeWise Reward ETH2` matches none. A false
//! positive is fixed per contract with `tokenql contract set --spam no`.

use std::collections::BTreeMap;

use sea_orm::{DatabaseConnection, DbErr};

use crate::store::contracts::{self, StoredContract};
use crate::store::flags::{heuristic_spam, FlagSource};
use crate::types::{Address, Chain};

/// Top-level domains the `domain` rule recognises: those spam names use, not those of
/// legitimate DeFi brands (`.fi`, `.finance`, `.cash`, `.exchange`).
pub const TLDS: &[&str] = &[
    "com", "net", "org", "io", "xyz", "app", "me", "gg", "cc", "co", "to", "ly", "vip", "top",
    "club", "site", "online", "live", "link", "pro", "info", "biz", "fun", "lol", "gift",
    "website", "store", "shop", "click", "ru", "cn",
];

/// Words that lure a holder to a site.
pub const LURES: &[&str] = &[
    "visit", "claim", "redeem", "activate", "airdrop", "reward", "rewards", "bonus", "giveaway",
    "gift", "voucher", "free",
];

const CTA_VERBS: &[&str] = &["claim", "redeem", "activate"];
const CTA_NEXT: &[&str] = &[
    "at", "on", "via", "now", "your", "here", "free", "reward", "rewards", "airdrop", "bonus",
    "token", "tokens",
];
const GIVEAWAY_WORDS: &[&str] = &[
    "airdrop", "reward", "rewards", "bonus", "giveaway", "gift", "voucher",
];

/// The reason of the first rule a contract's name or symbol matches.
pub fn check(name: Option<&str>, symbol: Option<&str>) -> Option<&'static str> {
    name.and_then(|n| check_text(n, false))
        .or_else(|| symbol.and_then(|s| check_text(s, true)))
}

/// The reason of the first rule a name (or, with `symbol`, a symbol) matches.
pub fn check_text(text: &str, symbol: bool) -> Option<&'static str> {
    let lower = text.to_lowercase();
    if ["http://", "https://", "www.", "t.me/"]
        .iter()
        .any(|p| lower.contains(p))
    {
        return Some("url");
    }
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let lured = lower.contains('$') || words.iter().any(|w| LURES.contains(w));
    if (symbol || lured) && has_domain(&lower) {
        return Some("domain");
    }
    let cta = words.iter().enumerate().any(|(i, w)| {
        *w == "visit"
            || (CTA_VERBS.contains(w)
                && ((i > 0 && words[i - 1] == "to")
                    || words.get(i + 1).is_some_and(|n| CTA_NEXT.contains(n))))
    });
    if cta {
        return Some("call-to-action");
    }
    if words.iter().any(|w| GIVEAWAY_WORDS.contains(w))
        && (lower.contains('$') || lower.contains('!') || has_amount(&lower))
    {
        return Some("giveaway");
    }
    if text.chars().any(is_invisible) {
        return Some("invisible-characters");
    }
    None
}

/// A number of at least three digits, thousands separators allowed (`1000`, `5,000`).
fn has_amount(lower: &str) -> bool {
    lower
        .split(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .any(|n| n.chars().filter(char::is_ascii_digit).count() >= 3)
}

/// `label.tld` with a known TLD, the TLD not followed by a letter or digit (`t.me/x`,
/// `usdt-claim.com`, `Visit Eth-Gift.xyz`).
fn has_domain(lower: &str) -> bool {
    let chars: Vec<char> = lower.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c != '.' || i == 0 || !chars[i - 1].is_alphanumeric() {
            continue;
        }
        let tld: String = chars[i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if TLDS.contains(&tld.as_str()) {
            return true;
        }
    }
    false
}

/// Characters that render as nothing: used to make a spam name look like a real token's.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00ad}'                  // soft hyphen
        | '\u{034f}'                // combining grapheme joiner
        | '\u{061c}'                // Arabic letter mark
        | '\u{115f}' | '\u{1160}'   // Hangul fillers
        | '\u{17b4}' | '\u{17b5}'
        | '\u{180e}'                // Mongolian vowel separator
        | '\u{200b}'..='\u{200f}'   // zero-width space/joiners, LRM/RLM
        | '\u{202a}'..='\u{202e}'   // bidirectional embeddings and overrides
        | '\u{2060}'..='\u{2064}'   // word joiner, invisible operators
        | '\u{2066}'..='\u{2069}'   // bidirectional isolates
        | '\u{3164}'                // Hangul filler
        | '\u{feff}'                // zero-width no-break space
        | '\u{ffa0}'                // half-width Hangul filler
    )
}

/// What a heuristics run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeuristicReport {
    /// Contracts looked at.
    pub checked: u64,
    /// Contracts whose name or symbol matches a rule (whatever decided their flag).
    pub matching: u64,
    /// Contracts newly flagged by the heuristics.
    pub flagged: u64,
    /// Heuristic flags removed because the name no longer matches.
    pub cleared: u64,
}

impl std::fmt::Display for HeuristicReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "spam heuristics: {} contracts checked, {} match a rule, {} newly flagged, {} flags cleared",
            self.checked, self.matching, self.flagged, self.cleared
        )
    }
}

/// Contracts read per statement.
const PAGE: u64 = 1_000;

/// Re-runs the rules over these contracts of `chain` (`None`: every stored contract of every
/// chain) and records the verdicts where nobody else decided.
pub async fn apply(
    db: &DatabaseConnection,
    scope: Option<(Chain, &[Address])>,
) -> Result<HeuristicReport, DbErr> {
    let mut report = HeuristicReport::default();
    match scope {
        Some((chain, addresses)) => {
            for chunk in addresses.chunks(PAGE as usize) {
                let rows = contracts::among(db, chain, chunk).await?;
                judge(db, &rows, &mut report).await?;
            }
        }
        None => {
            let mut after: Option<(i64, Address)> = None;
            loop {
                let rows = contracts::page(db, after.take(), PAGE).await?;
                judge(db, &rows, &mut report).await?;
                match rows.last() {
                    Some(r) if rows.len() as u64 == PAGE => after = Some((r.chain_id, r.address)),
                    _ => break,
                }
            }
        }
    }
    Ok(report)
}

/// Judges these rows and writes the verdicts, per chain.
async fn judge(
    db: &DatabaseConnection,
    rows: &[StoredContract],
    report: &mut HeuristicReport,
) -> Result<(), DbErr> {
    let mut verdicts: BTreeMap<i64, (Vec<Address>, Vec<Address>)> = BTreeMap::new();
    for r in rows {
        report.checked += 1;
        let address = r.address;
        if Chain::from_id(r.chain_id as u64).is_none() {
            continue;
        }
        let matches = check(r.name.as_deref(), r.symbol.as_deref()).is_some();
        report.matching += u64::from(matches);
        let (flag, clear) = verdicts.entry(r.chain_id).or_default();
        match (FlagSource::parse(r.spam_source.as_deref()), matches) {
            (None, true) if r.spam_source.is_none() => flag.push(address),
            (Some(FlagSource::Heuristic), false) => clear.push(address),
            _ => {}
        }
    }
    for (chain_id, (flag, clear)) in verdicts {
        let Some(chain) = Chain::from_id(chain_id as u64) else {
            continue;
        };
        report.flagged += flag.len() as u64;
        report.cleared += clear.len() as u64;
        heuristic_spam(db, chain, &flag, &clear).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_with_its_reason() {
        let names = [
            ("Visit https://usdt.gift to claim", Some("url")),
            ("www.eth-bonus.org", Some("url")),
            ("Join t.me/freetokens", Some("url")),
            ("$ USDT-CLAIM.COM", Some("domain")),
            ("Get your gift at Eth-Gift.xyz", Some("domain")),
            ("Airdrop: usdc-drop.io", Some("domain")),
            ("Visit our site to collect", Some("call-to-action")),
            ("Claim your tokens", Some("call-to-action")),
            ("Ready to redeem", Some("call-to-action")),
            ("REDEEM NOW", Some("call-to-action")),
            ("$5000 USDC Airdrop", Some("giveaway")),
            ("50,000 APE Rewards", Some("giveaway")),
            ("Bonus!", Some("giveaway")),
            ("Tether\u{200b} USD", Some("invisible-characters")),
            ("USD\u{202e}C", Some("invisible-characters")),
            ("\u{feff}WETH", Some("invisible-characters")),
        ];
        for (text, want) in names {
            assert_eq!(check_text(text, false), want, "{text:?}");
        }
        // A domain in a symbol is enough.
        assert_eq!(check_text("usdc-rewards.com", true), Some("domain"));
        assert_eq!(check_text("ZB.com", true), Some("domain"));
        assert_eq!(check_text("ZB.com", false), None);
    }

    #[test]
    fn legitimate_names_pass() {
        for text in [
            "Tether USD",
            "Wrapped Ether",
            "USD Coin (PoS)",
            "Curve.fi DAI/USDC/USDT",
            "yearn.finance",
            "ether.fi governance token",
            "Tornado.Cash: 100,000 USDT",
            "Shopping.io",
            "Crypto.com Coin",
            "Reward Token",
            "Curve Rewards",
            "StakeWise Reward ETH2",
            "Umbrella Reward #1",
            "Convex Finance: Claim Zap",
            "Tokenlon: Merkle Redeem",
            "ClaimSwap",
            "Wrapped liquid staked Ether 2.0",
            "Uniswap V2",
            "1INCH Token",
            "Ünïcødé ✓",
            "Dai Stablecoin",
            "stETH",
            "USD.e",
            ".com",
        ] {
            assert_eq!(check_text(text, false), None, "{text:?}");
        }
        for symbol in ["USDT", "USD.e", "sUSD", "CRV", "3Crv", "MKR"] {
            assert_eq!(check_text(symbol, true), None, "{symbol:?}");
        }
    }

    #[test]
    fn name_or_symbol() {
        assert_eq!(check(Some("Fine"), Some("fine.io")), Some("domain"));
        assert_eq!(
            check(Some("Claim now"), Some("fine.io")),
            Some("call-to-action")
        );
        assert_eq!(check(None, None), None);
        assert_eq!(check(Some("Fine"), Some("FINE")), None);
    }
}
