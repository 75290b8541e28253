//! `tokenql status`: each chain's head, indexed block and lag, and its collections' states.

use sea_orm::{DatabaseConnection, DbErr, EntityTrait, QueryOrder};

use crate::entity::{chain_state, collection_sync};
use crate::types::Chain;

/// Lines of the report.
pub async fn report(db: &DatabaseConnection) -> Result<Vec<String>, DbErr> {
    let mut out = vec![format!(
        "{:<12} {:>12} {:>12} {:>12} {:>8}",
        "chain", "start", "indexed", "head", "lag"
    )];
    let states = chain_state::Entity::find()
        .order_by_asc(chain_state::Column::ChainId)
        .all(db)
        .await?;
    if states.is_empty() {
        out.push("(nothing indexed yet)".into());
    }
    let opt = |v: Option<i64>| v.map_or("-".to_string(), |b| b.to_string());
    for s in &states {
        let name = Chain::from_id(s.chain_id as u64)
            .map_or(format!("0x{:x}", s.chain_id), |c| c.name().to_string());
        let lag = match (s.indexed_block, s.head_block) {
            (Some(i), Some(h)) => (h - i).max(0).to_string(),
            (None, Some(_)) => "all".into(),
            _ => "-".into(),
        };
        out.push(format!(
            "{name:<12} {:>12} {:>12} {:>12} {lag:>8}",
            opt(s.start_block),
            opt(s.indexed_block),
            opt(s.head_block)
        ));
    }
    let cols = collection_sync::Entity::find()
        .order_by_asc(collection_sync::Column::ChainId)
        .order_by_asc(collection_sync::Column::RequestedAt)
        .all(db)
        .await?;
    if !cols.is_empty() {
        out.push(String::new());
        out.push(format!(
            "{:<12} {:<42} {:<8} {:>12}",
            "chain", "collection", "state", "synced_to"
        ));
        for c in cols {
            let name = Chain::from_id(c.chain_id as u64)
                .map_or(format!("0x{:x}", c.chain_id), |c| c.name().to_string());
            out.push(format!(
                "{name:<12} {:<42} {:<8} {:>12}",
                c.contract_address,
                c.state,
                opt(c.synced_to_block)
            ));
        }
    }
    Ok(out)
}
