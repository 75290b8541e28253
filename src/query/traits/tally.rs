//! The arithmetic of traits, free of I/O: a collection's tokens with their traits in, counts and
//! rarity out. Unit-tested here; the questions in [`super`] only read and page.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::{NftRarity, TraitRarity};
use crate::types::metadata::{attributes, trait_value_text};
use crate::types::Uint256;

/// A trait: its type and its value as text.
pub(crate) type Trait = (String, String);

/// The distinct traits stated by a token's stored metadata (a JSON document): every attribute
/// with both a type and a value ([`crate::types::metadata`]), the value as text.
pub(crate) fn traits_of(metadata: Option<&str>) -> BTreeSet<Trait> {
    let Some(Ok(doc)) = metadata.map(serde_json::from_str::<Value>) else {
        return BTreeSet::new();
    };
    attributes(&doc)
        .into_iter()
        .filter_map(|a| Some((a.trait_type?, trait_value_text(&a.value)?)))
        .collect()
}

/// How many of a collection's `total` tokens have each trait.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Tokens per trait.
    pub counts: BTreeMap<Trait, u64>,
    /// Tokens counted, with traits or without.
    pub total: u64,
}

impl Tally {
    /// Counts the traits of `tokens` (each token's traits once).
    pub fn new<'a>(tokens: impl IntoIterator<Item = &'a BTreeSet<Trait>>) -> Self {
        let mut tally = Tally::default();
        for traits in tokens {
            tally.total += 1;
            for t in traits {
                *tally.counts.entry(t.clone()).or_default() += 1;
            }
        }
        tally
    }

    /// The rarity of a trait `count` tokens have: `percentage` is `count / total` in percent,
    /// rounded to two decimals; the label names the smallest whole percentage at or above the
    /// exact share (`Top 4% trait` for 3.2 %).
    pub fn trait_rarity(&self, count: u64) -> TraitRarity {
        let total = self.total.max(1);
        let percentage = (count as f64 * 10_000.0 / total as f64).round() / 100.0;
        let top = (count * 100).div_ceil(total);
        TraitRarity {
            percentage,
            label: format!("Top {top}% trait"),
        }
    }

    /// Each token's rarity among `tokens` (the tokens tallied). A token's score is the sum,
    /// over its traits, of `total / count` (rarer traits weigh more; the "rarity score" of
    /// rarity.tools), added in ascending order of count so that equal sets of counts give
    /// equal scores; its rank is 1 + the number of tokens scoring higher (ties share a rank);
    /// its percentage the smallest whole percentage at or above `rank / total`.
    pub fn nft_rarity(
        &self,
        tokens: &BTreeMap<Uint256, BTreeSet<Trait>>,
    ) -> HashMap<Uint256, NftRarity> {
        let total = self.total.max(1);
        let scores: Vec<(Uint256, f64)> = tokens
            .iter()
            .map(|(id, traits)| {
                let mut counts: Vec<u64> = traits
                    .iter()
                    .map(|t| self.counts.get(t).copied().unwrap_or(1).max(1))
                    .collect();
                counts.sort_unstable();
                let score = counts.iter().map(|&c| total as f64 / c as f64).sum::<f64>();
                (*id, score)
            })
            .collect();
        let mut sorted: Vec<f64> = scores.iter().map(|(_, s)| *s).collect();
        sorted.sort_by(|a, b| b.total_cmp(a));
        scores
            .into_iter()
            .map(|(id, score)| {
                let higher = sorted.partition_point(|s| *s > score) as u64;
                let rank = higher + 1;
                let percentage = (rank * 100).div_ceil(total);
                let rarity = NftRarity {
                    rank,
                    percentage,
                    label: format!("Top {percentage}%"),
                };
                (id, rarity)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> BTreeSet<Trait> {
        pairs
            .iter()
            .map(|(t, v)| (t.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn traits_of_a_document() {
        let doc = r#"{"attributes": [{"trait_type": "Hat", "value": "cap"},
            {"trait_type": "Level", "value": 3}, {"trait_type": "Hat", "value": "cap"},
            {"value": "untyped"}, {"trait_type": "Null", "value": null}]}"#;
        assert_eq!(traits_of(Some(doc)), set(&[("Hat", "cap"), ("Level", "3")]));
        assert!(traits_of(None).is_empty());
        assert!(traits_of(Some("not json")).is_empty());
    }

    #[test]
    fn counts_percentages_and_labels() {
        let a = set(&[("Hat", "cap"), ("Eyes", "red")]);
        let b = set(&[("Hat", "cap")]);
        let c = BTreeSet::new();
        let tally = Tally::new([&a, &b, &c]);
        assert_eq!(tally.total, 3);
        assert_eq!(tally.counts[&("Hat".into(), "cap".into())], 2);
        assert_eq!(tally.counts[&("Eyes".into(), "red".into())], 1);
        let r = tally.trait_rarity(2);
        assert_eq!((r.percentage, r.label.as_str()), (66.67, "Top 67% trait"));
        let r = tally.trait_rarity(1);
        assert_eq!((r.percentage, r.label.as_str()), (33.33, "Top 34% trait"));
        let r = Tally {
            total: 4,
            ..Tally::default()
        }
        .trait_rarity(1);
        assert_eq!((r.percentage, r.label.as_str()), (25.0, "Top 25% trait"));
    }

    #[test]
    fn ranks_share_ties_and_the_rarest_is_first() {
        let id = Uint256::from_u64;
        let tokens: BTreeMap<Uint256, BTreeSet<Trait>> = [
            (id(1), set(&[("Hat", "cap"), ("Eyes", "red")])),
            (id(2), set(&[("Hat", "cap")])),
            (id(3), set(&[("Hat", "crown")])),
            (id(4), BTreeSet::new()),
        ]
        .into_iter()
        .collect();
        let tally = Tally::new(tokens.values());
        let r = tally.nft_rarity(&tokens);
        // Scores: #1 = 4/2 + 4/1 = 6, #3 = 4/1 = 4, #2 = 4/2 = 2, #4 = 0.
        let ranks: Vec<(u64, u64)> = (1..=4)
            .map(|i| (r[&id(i)].rank, r[&id(i)].percentage))
            .collect();
        assert_eq!(ranks, vec![(1, 25), (3, 75), (2, 50), (4, 100)]);
        assert_eq!(r[&id(1)].label, "Top 25%");
        // Equal scores share a rank.
        let twins: BTreeMap<Uint256, BTreeSet<Trait>> =
            [(id(1), set(&[("A", "x")])), (id(2), set(&[("A", "y")]))]
                .into_iter()
                .collect();
        let r = Tally::new(twins.values()).nft_rarity(&twins);
        assert_eq!((r[&id(1)].rank, r[&id(2)].rank), (1, 1));
    }
}

#[cfg(test)]
mod timing {
    use super::*;

    /// The cost of a request's aggregation for a large collection (the module docs of
    /// `query/traits.rs` quote it): `cargo test --lib tally_timing -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a check"]
    fn tally_timing() {
        let docs: Vec<(Uint256, String)> = (0..30_000u64)
            .map(|i| {
                let attributes: Vec<Value> = (0..8)
                    .map(|t| {
                        serde_json::json!({"trait_type": format!("Trait type {t}"),
                            "value": format!("Value {}", (i * 7 + t * 13) % (5 + t * 11))})
                    })
                    .collect();
                let doc = serde_json::json!({"name": format!("Token #{i}"),
                    "description": "A token of a large collection, for the timing.",
                    "image": format!("ipfs://QmSomeContentIdentifierOfTheImage/{i}.png"),
                    "attributes": attributes});
                (Uint256::from_u64(i), doc.to_string())
            })
            .collect();
        let bytes: usize = docs.iter().map(|(_, d)| d.len()).sum();
        let start = std::time::Instant::now();
        let tokens: BTreeMap<Uint256, BTreeSet<Trait>> = docs
            .iter()
            .map(|(id, d)| (*id, traits_of(Some(d))))
            .collect();
        let tally = Tally::new(tokens.values());
        let counted = start.elapsed();
        let rarity = tally.nft_rarity(&tokens);
        let ranked = start.elapsed() - counted;
        assert_eq!(rarity.len(), 30_000);
        eprintln!(
            "30000 documents, {} bytes on average, {} traits: parse + tally {counted:?}, NFT rarity {ranked:?}",
            bytes / docs.len(),
            tally.counts.len()
        );
    }
}
