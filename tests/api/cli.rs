//! Black-box tests of the `tokenql` binary on SQLite: migrate, keys, import (twice: nothing
//! changes), and `serve --demo` answering with the key it prints.

use std::path::PathBuf;

use sea_orm::{ConnectionTrait, EntityTrait};
use tokenql::entity::*;

use crate::support::common::binary;
use binary::{data, tokenql};

fn temp_db(tag: &str) -> (PathBuf, String) {
    let mut raw = [0u8; 8];
    getrandom::fill(&mut raw).expect("randomness");
    let name: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    let path = std::env::temp_dir().join(format!("tq-cli-{tag}-{name}.db"));
    let url = format!("sqlite://{}?mode=rwc", path.display());
    (path, url)
}

/// Every row of every indexed table, in a canonical order.
async fn digest(url: &str) -> String {
    let db = tokenql::store::database::connect(url, 1)
        .await
        .expect("connect");
    let mut parts = Vec::new();
    macro_rules! dump {
        ($($m:ident),*) => {$(
            let mut rows: Vec<String> = $m::Entity::find().all(&db).await.expect("select").iter().map(|r| format!("{r:?}")).collect();
            rows.sort();
            parts.push(format!("{}:{}", stringify!($m), rows.join("\n")));
        )*};
    }
    dump!(
        block,
        chain_state,
        erc20_transfer,
        nft_transfer,
        nft_holding,
        nft_token,
        contract,
        scope_sync,
        address_label
    );
    parts.join("\n\n")
}

#[tokio::test]
async fn commands_fail_clearly_before_migrate() {
    let (path, url) = temp_db("nomigrate");
    let (ok, _, err) = tokenql(&url, &["keys", "list"]);
    assert!(!ok);
    assert!(err.contains("run `tokenql migrate`"), "{err}");
    // The check only reads: the database is left as it was, without a migrations table.
    let db = tokenql::store::database::connect(&url, 1)
        .await
        .expect("connect");
    let tables = db
        .query_all_raw(sea_orm::Statement::from_string(
            sea_orm::DbBackend::Sqlite,
            "SELECT name FROM sqlite_master WHERE type = 'table'",
        ))
        .await
        .expect("list tables");
    assert!(tables.is_empty(), "{} tables were created", tables.len());
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn keys_and_idempotent_import() {
    let (path, url) = temp_db("keys");
    assert!(tokenql(&url, &["migrate"]).0);

    let (ok, out, err) = tokenql(&url, &["keys", "create", "--name", "alice"]);
    assert!(ok, "{err}");
    let key = out.lines().last().expect("a line").trim().to_string();
    assert!(key.starts_with("tq_") && key.len() > 40, "{out}");
    let (_, list, _) = tokenql(&url, &["keys", "list"]);
    assert!(list.contains("alice") && !list.contains(&key), "{list}");
    let db = tokenql::store::database::connect(&url, 1)
        .await
        .expect("connect");
    assert!(tokenql::keys::verify(&db, &key)
        .await
        .expect("verify")
        .is_some());
    let (ok, _, _) = tokenql(&url, &["keys", "revoke", "alice"]);
    assert!(ok);
    assert!(tokenql::keys::verify(&db, &key)
        .await
        .expect("verify")
        .is_none());
    let (ok, _, err) = tokenql(&url, &["keys", "revoke", "nobody"]);
    assert!(!ok && err.contains("no active key"), "{err}");

    let args = binary::sample_import();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, out, err) = tokenql(&url, &args);
    assert!(ok, "{err}");
    assert!(
        out.contains("1205 ERC20 transfers, 147 NFT transfers"),
        "{out}"
    );
    assert!(out.contains("skipped 2 non-transfer"), "{out}");
    let first = digest(&url).await;
    let (ok, _, err) = tokenql(&url, &args);
    assert!(ok, "{err}");
    assert_eq!(
        first,
        digest(&url).await,
        "a second import changed the database"
    );

    let (ok, _, err) = tokenql(&url, &["import", "--chain", "solana", "--tokenlist", "x"]);
    assert!(!ok && err.contains("unknown chain"), "{err}");
    let (ok, _, err) = tokenql(
        &url,
        &[
            "import",
            "--chain",
            "eth",
            "--logs",
            "/nonexistent",
            "--blocks",
            "/nonexistent",
        ],
    );
    assert!(!ok && err.contains("cannot read"), "{err}");
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn malformed_lines_are_skipped_and_counted() {
    let (path, url) = temp_db("malformed");
    assert!(tokenql(&url, &["migrate"]).0);
    let dir = std::env::temp_dir();
    let logs = dir.join(format!("{}.logs.jsonl", path.display()));
    let good = std::fs::read_to_string(data("demo-mainnet/logs.jsonl")).expect("demo logs");
    let first = good.lines().next().expect("a log");
    let text = format!(
        "{first}\nnot json\n{{\"address\":\"0x12\"}}\n{}\n",
        first.replace(
            "\"0x00000000000000000000000000000000000000000000000000000000000186a0\"",
            "\"0x01\""
        )
    );
    std::fs::write(&logs, text).expect("write");
    let (ok, out, err) = tokenql(
        &url,
        &[
            "import",
            "--chain",
            "eth",
            "--logs",
            &logs.display().to_string(),
            "--blocks",
            &data("demo-mainnet/blocks.jsonl"),
        ],
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("1 ERC20 transfers") && out.contains("3 malformed"),
        "{out}"
    );
    let _ = std::fs::remove_file(logs);
    let _ = std::fs::remove_file(path);
}
