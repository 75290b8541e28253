//! `schema.graphql` is the exported SDL of the GraphQL schema: this test fails when the committed
//! file is stale, and rewrites it when run with `UPDATE_SCHEMA=1`.

use std::path::Path;

#[test]
fn committed_schema_graphql_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema.graphql");
    // One trailing newline, as editors and formatters keep text files.
    let current = format!("{}\n", tokenql::graphql::sdl().trim_end());
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        if let Err(e) = std::fs::write(&path, &current) {
            panic!("could not write {}: {e}", path.display());
        }
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed.replace("\r\n", "\n") == current,
        "{} is stale: the GraphQL schema changed. Review the change, then update the file with\n\n    \
         UPDATE_SCHEMA=1 cargo test -p tokenql --test graphql_schema\n\nand commit it.",
        path.display()
    );
}

#[test]
fn every_type_field_argument_and_enum_value_is_documented() {
    let sdl = tokenql::graphql::sdl();
    for name in [
        "scalar Address",
        "scalar Uint256",
        "scalar BlockNumber",
        "enum SyncStatus",
        "enum ContractType",
        "enum TokenIdFormat",
        "type Query",
        "type PageInfo",
        "type NftConnection",
        "type NftEdge",
        "type Nft ",
        "type Erc20TransferConnection",
        "type Erc20TransferEdge",
        "type Erc20Transfer ",
    ] {
        let at = sdl
            .find(&format!("\n{name}"))
            .unwrap_or_else(|| panic!("{name} missing from the SDL"));
        assert!(
            sdl[..at].trim_end().ends_with("\"\"\""),
            "{name} has no description"
        );
    }
    // Every member of a type, enum or argument list directly follows a description block.
    let mut in_description = false;
    let mut described = false;
    // The `schema { query: Query }` block at the end has no members of ours.
    let body = sdl.split("\nschema {").next().unwrap_or_default();
    for line in body.lines() {
        let t = line.trim();
        if t == "\"\"\"" {
            in_description = !in_description;
            described = !in_description;
            continue;
        }
        if in_description || t.is_empty() {
            continue;
        }
        let member = line.starts_with('\t') && t != "}" && !t.starts_with(')');
        assert!(!member || described, "undocumented schema member: {t}");
        described = false;
    }
}
