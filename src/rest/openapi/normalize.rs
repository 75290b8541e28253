//! Finishing touches that are easiest on the JSON form of the document.

use serde_json::{json, Value};

/// Where component schemas live; `$ref`s point here.
const SCHEMAS: &str = "#/components/schemas/";

/// Finishing touches that are easiest on the JSON form of the document:
///
/// - A generic envelope gets utoipa's name `nftOwnerCollection_nftOwner` and its record schema
///   inlined; it is renamed `nftOwnerCollection` and its items point to `nftOwner` instead.
/// - A record with a flattened record in it (`allOf`) is written as one object of both's fields.
/// - Every field of every response object is always written (`null` when missing), so all
///   properties are `required`; nullability is in their types.
/// - Descriptions taken from doc comments lose the comments' hard line breaks (paragraphs and
///   list items stay).
/// - Every answer that carries a `status` (in its envelope or its `X-Sync-Status` header) also
///   documents the `X-Indexed-Block` header: the block it was read as of.
pub(super) fn normalize(mut doc: Value) -> Value {
    let mut renames = Vec::new();
    if let Some(schemas) = doc["components"]["schemas"].as_object_mut() {
        let names: Vec<String> = schemas.keys().cloned().collect();
        for name in &names {
            let Some((base, arg)) = name.rsplit_once('_') else {
                continue;
            };
            let (Some(record), false) = (schemas.get(arg).cloned(), schemas.contains_key(base))
            else {
                continue;
            };
            let Some(mut envelope) = schemas.remove(name) else {
                continue;
            };
            if let Some(props) = envelope["properties"].as_object_mut() {
                for prop in props.values_mut() {
                    if prop["items"] == record {
                        prop["items"] = json!({ "$ref": format!("{SCHEMAS}{arg}") });
                    }
                }
            }
            schemas.insert(base.to_string(), envelope);
            renames.push((format!("{SCHEMAS}{name}"), format!("{SCHEMAS}{base}")));
        }
        merge_all_of(schemas);
        for schema in schemas.values_mut() {
            require_all(schema);
        }
    }
    rewrite(&mut doc, &renames);
    add_block_headers(&mut doc);
    doc
}

/// A record with a `#[serde(flatten)]` field is utoipa's `allOf` of the flattened record's
/// `$ref` and an object of its own fields; it is written as one object with the fields of both,
/// so that every record is one object whose fields are all listed (as it is serialized).
fn merge_all_of(schemas: &mut serde_json::Map<String, Value>) {
    let names: Vec<String> = schemas
        .iter()
        .filter(|(_, s)| s.get("allOf").is_some())
        .map(|(n, _)| n.clone())
        .collect();
    for name in names {
        let parts = schemas[&name]["allOf"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut merged = json!({"type": "object", "properties": {}});
        for part in parts {
            let part = match part["$ref"].as_str().and_then(|r| r.strip_prefix(SCHEMAS)) {
                Some(target) => schemas.get(target).cloned().unwrap_or_default(),
                None => part,
            };
            for (k, v) in part["properties"].as_object().into_iter().flatten() {
                merged["properties"][k] = v.clone();
            }
        }
        if let Some(d) = schemas[&name].get("description").cloned() {
            merged["description"] = d;
        }
        schemas.insert(name, merged);
    }
}

/// What the `X-Indexed-Block` header says.
const INDEXED_BLOCK: &str = "The last block the indexer had stored when the answer was read: \
a `SYNCED` answer holds every matching record up to this block, and none after it (the rows and \
the status are read in one snapshot). Absent while nothing is indexed.";

/// The one answer with a status that reads several chains, so names no one block.
const MANY_CHAINS: &str = "/wallets/{address}/chains";

/// Adds the `X-Indexed-Block` header to every 200 answer that carries a `status` (but the
/// answer over several chains).
fn add_block_headers(doc: &mut Value) {
    let schemas = doc["components"]["schemas"].clone();
    let has_status = |response: &Value| {
        let named = response["content"]["application/json"]["schema"]["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix(SCHEMAS))
            .is_some_and(|name| !schemas[name]["properties"]["status"].is_null());
        named || !response["headers"]["X-Sync-Status"].is_null()
    };
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (_, item) in paths.iter_mut().filter(|(p, _)| *p != MANY_CHAINS) {
        for method in ["get", "post"] {
            let ok = item
                .get_mut(method)
                .and_then(|op| op.pointer_mut("/responses/200"));
            let Some(response) = ok.filter(|r| has_status(r)) else {
                continue;
            };
            response["headers"]["X-Indexed-Block"] = json!({
                "schema": { "type": "integer", "format": "int64", "minimum": 0 },
                "description": INDEXED_BLOCK,
            });
        }
    }
}

/// Marks every property of `schema` and of the object schemas inside it as required.
fn require_all(schema: &mut Value) {
    match schema {
        Value::Object(o) => {
            if let Some(Value::Object(props)) = o.get("properties") {
                let required = props.keys().map(|k| json!(k)).collect();
                o.insert("required".to_string(), Value::Array(required));
            }
            for (k, v) in o.iter_mut() {
                if k != "required" && k != "enum" && k != "examples" && k != "example" {
                    require_all(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(require_all),
        _ => {}
    }
}

/// Applies `$ref` renames and unwraps description lines, everywhere in `v`. A `oneOf` without
/// a description of its own (utoipa's `T | null` for an optional field) takes its member's.
fn rewrite(v: &mut Value, renames: &[(String, String)]) {
    match v {
        Value::Object(o) => {
            for (k, child) in o.iter_mut() {
                match (k.as_str(), &mut *child) {
                    ("$ref", Value::String(r)) => {
                        if let Some((_, to)) = renames.iter().find(|(from, _)| from == r) {
                            *r = to.clone();
                        }
                    }
                    ("description", Value::String(d)) => *d = unwrap_lines(d),
                    _ => rewrite(child, renames),
                }
            }
            if !o.contains_key("description") {
                let hoisted =
                    o.get_mut("oneOf")
                        .and_then(Value::as_array_mut)
                        .and_then(|members| {
                            members
                                .iter_mut()
                                .find_map(|m| m.as_object_mut()?.remove("description"))
                        });
                if let Some(d) = hoisted {
                    o.insert("description".to_string(), d);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| rewrite(i, renames)),
        _ => {}
    }
}

/// Joins the lines of each paragraph into one; paragraphs stay apart (one blank line) and list
/// items (`- `) on their own lines.
fn unwrap_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push_str("\n\n");
        } else if line.starts_with("- ") && !out.is_empty() {
            out.push('\n');
        } else if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
        blank = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwraps_paragraph_lines_and_keeps_blocks() {
        assert_eq!(unwrap_lines("one\ntwo"), "one two");
        assert_eq!(unwrap_lines("a\nb\n\nc\n"), "a b\n\nc");
        assert_eq!(
            unwrap_lines("intro:\n\n- x\n  y\n- z"),
            "intro:\n\n- x y\n- z"
        );
        assert_eq!(unwrap_lines("intro:\n- x"), "intro:\n- x");
    }

    #[test]
    fn envelopes_are_renamed_and_point_to_their_records() {
        let record = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let doc = json!({
            "paths": {"/x": {"get": {"responses": {"200": {"content": {"application/json":
                {"schema": {"$ref": "#/components/schemas/env_rec"}}}}}}}},
            "components": {"schemas": {
                "rec": record,
                "env_rec": {"type": "object", "properties": {
                    "result": {"type": "array", "items": record},
                    "cursor": {"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/rec", "description": "c"}]}
                }}
            }}
        });
        let doc = normalize(doc);
        let env = &doc["components"]["schemas"]["env"];
        assert_eq!(
            env["properties"]["result"]["items"],
            json!({"$ref": "#/components/schemas/rec"})
        );
        assert_eq!(env["required"], json!(["cursor", "result"]));
        assert_eq!(env["properties"]["cursor"]["description"], "c");
        assert_eq!(
            doc["components"]["schemas"]["rec"]["required"],
            json!(["a"])
        );
        assert_eq!(
            doc["paths"]["/x"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
                ["$ref"],
            "#/components/schemas/env"
        );
    }
}
