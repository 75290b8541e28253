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
         UPDATE_SCHEMA=1 cargo test -p tokenql --test api graphql_schema::\n\nand commit it.",
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
        "enum SortOrder",
        "type Wallet ",
        "type Token ",
        "type TokenBalance ",
        "type TokenBalanceConnection",
        "type NftCollection ",
        "type WalletCollection ",
        "type WalletCollectionConnection",
        "type CollectionNft ",
        "type CollectionNftConnection",
        "type NftToken ",
        "type NftTransfer ",
        "type NftTransferConnection",
        "type NftTransferEdge",
        "type NftOwnerConnection",
        "type NftMedia",
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

/// A field of an object type: its name, whether it takes arguments, its type.
type Field = (String, bool, String);

/// The fields of each object type in `sdl`.
fn object_fields(sdl: &str) -> std::collections::BTreeMap<String, Vec<Field>> {
    let mut types = std::collections::BTreeMap::new();
    let mut current: Option<(String, Vec<Field>)> = None;
    let mut open_args: Option<String> = None;
    for line in sdl.lines() {
        if let Some(name) = line
            .strip_prefix("type ")
            .and_then(|l| l.strip_suffix(" {"))
        {
            current = Some((name.to_string(), Vec::new()));
            continue;
        }
        let Some((name, fields)) = current.as_mut() else {
            continue;
        };
        if line == "}" {
            types.insert(name.clone(), std::mem::take(fields));
            current = None;
        } else if let Some(field) = line.strip_prefix('\t').and_then(|l| l.strip_suffix('(')) {
            open_args = Some(field.to_string());
        } else if let Some(ty) = line.strip_prefix("\t): ") {
            let field = open_args.take().expect("an argument list closes a field");
            fields.push((field, true, ty.to_string()));
        } else if let Some((field, ty)) = line.strip_prefix('\t').and_then(|l| l.split_once(": ")) {
            if open_args.is_none() && !field.starts_with('\t') && !field.contains(' ') {
                fields.push((field.to_string(), false, ty.to_string()));
            }
        }
    }
    types
}

/// A bad argument of any field is a 400 with `data: null` (`error::null_on_bad_input`): that is
/// the GraphQL spec's null propagation only if every field taking arguments is non-null and
/// no nullable field leads to one.
#[test]
fn fields_with_arguments_are_reached_through_non_null_fields_only() {
    let types = object_fields(&tokenql::graphql::sdl());
    let wallet = types.get("Wallet").cloned().unwrap_or_default();
    assert!(
        wallet.contains(&("nftTransfers".into(), true, "NftTransferConnection!".into()))
            && wallet.contains(&("address".into(), false, "Address!".into())),
        "the SDL parsed: {wallet:?}"
    );
    let named = |ty: &str| {
        ty.trim_matches(|c| c == '[' || c == ']' || c == '!')
            .to_string()
    };
    let mut reachable: Vec<String> = Vec::new();
    for (ty, fields) in &types {
        for (field, args, out) in fields {
            assert!(
                !args || out.ends_with('!'),
                "{ty}.{field} takes arguments but is nullable: {out}"
            );
            if !out.ends_with('!') && types.contains_key(&named(out)) {
                reachable.push(named(out));
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    while let Some(ty) = reachable.pop() {
        if !seen.insert(ty.clone()) {
            continue;
        }
        for (field, args, out) in &types[&ty] {
            assert!(!args, "{ty}.{field} takes arguments below a nullable field");
            if types.contains_key(&named(out)) {
                reachable.push(named(out));
            }
        }
    }
    assert!(
        seen.contains("NftMedia"),
        "the nullable media objects were checked: {seen:?}"
    );
}
