//! `normalized_metadata`: the common fields of an NFT's metadata JSON, under fixed names.
//!
//! Built from the stored metadata when it parses as a JSON object; otherwise every field is
//! `null` and `attributes` is `[]`. Aliases in the wild are folded in: `external_url` for
//! `external_link`, `image_url` for `image`. Only text (or a number, written as text) becomes
//! a text field.

use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// The normalized form of an NFT's metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Default, ToSchema)]
#[schema(as = normalizedMetadata)]
pub struct NormalizedMetadata {
    /// Name or title of the NFT.
    pub name: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// URL of its image.
    pub image: Option<String>,
    /// A link to more information.
    pub external_link: Option<String>,
    /// URL of an animated version.
    pub animation_url: Option<String>,
    /// Its traits.
    pub attributes: Vec<Attribute>,
}

/// One trait of an NFT.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = normalizedMetadataAttribute)]
pub struct Attribute {
    /// The trait's title.
    pub trait_type: Option<String>,
    /// Its value, as the metadata gives it (text, number, boolean).
    #[schema(schema_with = super::openapi::attribute_value)]
    pub value: Value,
    /// How the value should be displayed.
    pub display_type: Option<String>,
    /// For numeric values, the upper bound.
    #[schema(value_type = Option<f64>)]
    pub max_value: Option<Value>,
    /// How many values this trait has across the collection; not computed yet.
    pub trait_count: Option<u64>,
    /// Display position; not given by the metadata standards, so `null`.
    pub order: Option<u64>,
}

/// A text field: a non-blank string, or a number written as text.
fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The first of `keys` that holds text.
fn first_text(obj: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| text(obj.get(*k)))
}

fn attribute(v: &Value) -> Option<Attribute> {
    match v {
        Value::Object(o) => Some(Attribute {
            trait_type: first_text(o, &["trait_type", "type", "key"]),
            value: o.get("value").cloned().unwrap_or(Value::Null),
            display_type: text(o.get("display_type")),
            max_value: o.get("max_value").filter(|m| m.is_number()).cloned(),
            trait_count: None,
            order: None,
        }),
        Value::String(_) | Value::Number(_) | Value::Bool(_) => Some(Attribute {
            trait_type: None,
            value: v.clone(),
            display_type: None,
            max_value: None,
            trait_count: None,
            order: None,
        }),
        _ => None,
    }
}

impl NormalizedMetadata {
    /// Normalizes parsed metadata; anything but a JSON object gives the empty form.
    pub fn from_json(metadata: Option<&Value>) -> Self {
        let Some(Value::Object(o)) = metadata else {
            return Self::default();
        };
        let attributes = match o.get("attributes") {
            Some(Value::Array(items)) => items.iter().filter_map(attribute).collect(),
            _ => Vec::new(),
        };
        Self {
            name: first_text(o, &["name", "title"]),
            description: first_text(o, &["description"]),
            image: first_text(o, &["image", "image_url"]),
            external_link: first_text(o, &["external_link", "external_url"]),
            animation_url: first_text(o, &["animation_url"]),
            attributes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn normalizes_the_common_fields() {
        let m = json!({
            "name": "#31.1", "description": null, "image": "ipfs://x",
            "external_url": "https://e", "animation_url": "https://a.mp4",
            "attributes": [
                {"trait_type": "Eye Color", "value": "hazel", "display_type": "string", "max_value": 100},
                {"trait_type": "Level", "value": 3},
                "plain",
                null
            ]
        });
        let n = NormalizedMetadata::from_json(Some(&m));
        assert_eq!(n.name.as_deref(), Some("#31.1"));
        assert_eq!(n.description, None);
        assert_eq!(n.image.as_deref(), Some("ipfs://x"));
        assert_eq!(n.external_link.as_deref(), Some("https://e"));
        assert_eq!(n.animation_url.as_deref(), Some("https://a.mp4"));
        assert_eq!(n.attributes.len(), 3);
        assert_eq!(n.attributes[0].trait_type.as_deref(), Some("Eye Color"));
        assert_eq!(n.attributes[0].max_value, Some(json!(100)));
        assert_eq!(n.attributes[1].value, json!(3));
        assert_eq!(n.attributes[2].value, json!("plain"));
    }

    #[test]
    fn anything_else_is_empty() {
        for v in [
            None,
            Some(json!([1, 2])),
            Some(json!("text")),
            Some(json!(null)),
        ] {
            let n = NormalizedMetadata::from_json(v.as_ref());
            assert_eq!(n, NormalizedMetadata::default());
            let s = serde_json::to_value(&n).unwrap_or_default();
            assert_eq!(
                s,
                json!({"name": null, "description": null, "image": null,
                       "external_link": null, "animation_url": null, "attributes": []})
            );
        }
    }
}
