//! Service-wide settings kept in the database, such as the secret that signs cursors (so
//! cursors survive restarts and work across several API processes).

use sea_orm::{ConnectionTrait, DbErr, EntityTrait};

use crate::entity::setting;

const CURSOR_SECRET: &str = "cursor_secret";

/// Returns the cursor-signing secret, creating a random one on first use.
pub async fn cursor_secret<C: ConnectionTrait>(db: &C) -> Result<Vec<u8>, DbErr> {
    if let Some(s) = setting::Entity::find_by_id(CURSOR_SECRET.to_string())
        .one(db)
        .await?
    {
        return Ok(s.value.into_bytes());
    }
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw).map_err(|e| DbErr::Custom(format!("no randomness: {e}")))?;
    let value = crate::types::hex::lower(&raw);
    setting::Entity::insert(setting::ActiveModel::from(setting::Model {
        name: CURSOR_SECRET.into(),
        value,
    }))
    .on_conflict(crate::store::skip_existing([setting::Column::Name]))
    .exec_without_returning(db)
    .await?;
    // Another process may have won the race: read back what is stored.
    setting::Entity::find_by_id(CURSOR_SECRET.to_string())
        .one(db)
        .await?
        .map(|s| s.value.into_bytes())
        .ok_or_else(|| DbErr::RecordNotFound("cursor secret".into()))
}
