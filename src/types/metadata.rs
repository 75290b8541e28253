//! An NFT's traits as its metadata JSON states them: the one reading of `attributes` that both
//! the REST records' `normalized_metadata` (`rest/normalized_metadata.rs`) and the query
//! service's trait counts (`query/traits.rs`) use, so a trait counted is a trait shown.
//!
//! `attributes` (OpenSea: an array of `{trait_type, value, display_type, max_value}`, or of bare
//! values), else `traits` (the same, older name), else ERC1155 `properties` (an object: key →
//! value, or key → `{name, value, display_value}`); an object instead of an array is read like
//! `properties`. Values are kept as the metadata gives them (text, number, boolean); `null`
//! values and nested objects without a `value` are dropped.

use serde_json::{Map, Value};

/// One trait of an NFT, as its metadata gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataAttribute {
    /// The trait's title (`trait_type`, `type`, `key` or `name`), when it has text.
    pub trait_type: Option<String>,
    /// Its value, as the metadata gives it (text, number, boolean; `null` when absent).
    pub value: Value,
    /// How the value should be displayed.
    pub display_type: Option<String>,
    /// For numeric values, the upper bound (numeric text is converted).
    pub max_value: Option<Value>,
}

/// A text field: a non-blank string, or a number written as text.
pub fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The first of `keys` that holds text.
pub fn first_text(obj: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| text(obj.get(*k)))
}

/// A number, or text that is one.
fn number(v: Option<&Value>) -> Option<Value> {
    match v? {
        Value::Number(_) => v.cloned(),
        Value::String(s) => {
            let s = s.trim();
            s.parse::<i64>().map(Value::from).ok().or_else(|| {
                s.parse::<f64>()
                    .ok()
                    .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
            })
        }
        _ => None,
    }
}

fn trait_of(trait_type: Option<String>, value: Value) -> MetadataAttribute {
    MetadataAttribute {
        trait_type,
        value,
        display_type: None,
        max_value: None,
    }
}

/// One entry of an `attributes` / `traits` array.
fn attribute(v: &Value) -> Option<MetadataAttribute> {
    match v {
        Value::Object(o) => Some(MetadataAttribute {
            trait_type: first_text(o, &["trait_type", "type", "key", "name"]),
            display_type: text(o.get("display_type")),
            max_value: number(o.get("max_value")),
            ..trait_of(None, o.get("value").cloned().unwrap_or(Value::Null))
        }),
        Value::String(_) | Value::Number(_) | Value::Bool(_) => Some(trait_of(None, v.clone())),
        _ => None,
    }
}

/// ERC1155 `properties` (or an `attributes` object): key → value or `{name, value, …}`.
fn properties(o: &Map<String, Value>) -> Vec<MetadataAttribute> {
    o.iter()
        .filter_map(|(key, v)| match v {
            Value::Null => None,
            Value::Object(rich) => {
                let value = rich.get("value").filter(|v| !v.is_null())?.clone();
                let name = first_text(rich, &["name", "trait_type"]).unwrap_or(key.clone());
                Some(MetadataAttribute {
                    display_type: text(rich.get("display_type")),
                    max_value: number(rich.get("max_value")),
                    ..trait_of(Some(name), value)
                })
            }
            other => Some(trait_of(Some(key.clone()), other.clone())),
        })
        .collect()
}

/// The attributes of a metadata object (see the module docs); none for anything else.
pub fn attributes(metadata: &Value) -> Vec<MetadataAttribute> {
    let Value::Object(o) = metadata else {
        return Vec::new();
    };
    let list = |k: &str| match o.get(k) {
        Some(Value::Array(items)) => Some(items.iter().filter_map(attribute).collect()),
        Some(Value::Object(map)) => Some(properties(map)),
        _ => None,
    };
    list("attributes")
        .or_else(|| list("traits"))
        .or_else(|| list("properties"))
        .unwrap_or_default()
}

/// A trait value as text, the form traits are counted, matched and answered in: a string as it
/// is, a number or boolean as JSON writes it (`3`, `2.5`, `true`), an array or object as compact
/// JSON; `None` for `null`.
pub fn trait_value_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_as_text() {
        assert_eq!(trait_value_text(&json!("Blue")), Some("Blue".into()));
        assert_eq!(trait_value_text(&json!(3)), Some("3".into()));
        assert_eq!(trait_value_text(&json!(2.5)), Some("2.5".into()));
        assert_eq!(trait_value_text(&json!(true)), Some("true".into()));
        assert_eq!(trait_value_text(&json!([1, 2])), Some("[1,2]".into()));
        assert_eq!(trait_value_text(&Value::Null), None);
    }

    #[test]
    fn attributes_of_each_form() {
        let m = json!({"attributes": [{"trait_type": "Hat", "value": "cap"}, "plain", null]});
        let a = attributes(&m);
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].trait_type.as_deref(), Some("Hat"));
        assert_eq!(a[1].trait_type, None);
        let m = json!({"properties": {"Color": "red", "gone": null}});
        let a = attributes(&m);
        assert_eq!(a.len(), 1);
        assert_eq!(
            (a[0].trait_type.as_deref(), &a[0].value),
            (Some("Color"), &json!("red"))
        );
        assert!(attributes(&json!([1])).is_empty());
    }
}
