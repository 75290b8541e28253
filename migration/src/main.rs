//! The migration crate's own CLI (`cargo run -p migration -- up`); `tokenql migrate` is the
//! usual entry point.
use sea_orm_migration::prelude::*;

#[tokio::main]
async fn main() {
    cli::run_cli(migration::Migrator).await;
}
