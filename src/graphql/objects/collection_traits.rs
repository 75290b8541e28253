//! `NftCollection.traits`: the `NftTrait` node (one trait of a collection, with how many of its
//! tokens have it and how rare it is).

use async_graphql::Object;

use crate::graphql::connection::Listed;
use crate::graphql::fast_path::plain::PlainNode;
use crate::query;

/// One trait of a collection: a trait type and a value, with how many of the collection's held
/// tokens have it.
pub struct NftTrait(pub query::TraitCount);

impl Listed for NftTrait {
    const CONNECTION: &'static str = "NftTraitConnection";
    const EDGE: &'static str = "NftTraitEdge";
}

/// Every field goes through the ordinary resolvers.
impl PlainNode for NftTrait {}

/// One trait of a collection.
#[Object]
impl NftTrait {
    /// The trait type (`Background`).
    async fn trait_type(&self) -> &str {
        &self.0.trait_type
    }

    /// The value, as text: a string as the metadata gives it, a number or boolean as JSON
    /// writes it (`3`, `true`).
    async fn value(&self) -> &str {
        &self.0.value
    }

    /// How many of the collection's held tokens have this trait.
    async fn count(&self) -> i64 {
        i64::try_from(self.0.count).unwrap_or(i64::MAX)
    }

    /// The share of the collection's held tokens that have it, in percent, two decimals;
    /// `null` until the connection's `status` is `SYNCED`.
    async fn percentage(&self) -> Option<f64> {
        self.0.rarity.as_ref().map(|r| r.percentage)
    }

    /// `Top N% trait`, N the share rounded up to a whole percentage; `null` until the
    /// connection's `status` is `SYNCED`.
    async fn rarity_label(&self) -> Option<&str> {
        self.0.rarity.as_ref().map(|r| r.label.as_str())
    }
}
