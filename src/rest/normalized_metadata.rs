//! `normalized_metadata`: the common fields of an NFT's metadata JSON, under fixed names.
//!
//! Follows the ERC721 and ERC1155 metadata JSON schemas and OpenSea's metadata conventions.
//! Built from the stored metadata when it parses as a JSON object; otherwise every field is
//! `null` and `attributes` is `[]`. Text fields take a non-blank string, or a number written as
//! text; anything else is `null`.
//!
//! | field | taken from, first that holds text |
//! |---|---|
//! | `name` | `name`, `title` |
//! | `description` | `description` |
//! | `image` | `image`, `image_url`, then `image_data` (OpenSea's inline SVG): a `data:` URI as it is, raw SVG as `data:image/svg+xml;base64,…` — the same rule as the media previews |
//! | `external_link` | `external_link`, `external_url` |
//! | `animation_url` | `animation_url` |
//! | `attributes` | `attributes`, else `traits`, else ERC1155 `properties`, read as [`crate::types::metadata`] says (the reading the trait counts of `GET /nft/{address}/traits` share) |
//!
//! Attribute values are kept as the metadata gives them (text, number, boolean); `null` values
//! and nested objects without a `value` are dropped. `max_value` is a number (numeric text is
//! converted). `trait_count` (how many tokens of the collection share the trait, in Moralis) is
//! `null` here: the collection-wide counts are the traits routes' (`rest/traits.rs`). `order` is
//! `null`: no standard defines it.
//!
//! ERC1155: the standard says `{id}` in any value is the token id as 64 lowercase hex digits;
//! [`NormalizedMetadata::for_token`] substitutes it in `image`, `animation_url` and
//! `external_link`.

use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::types::metadata::{attributes, first_text, MetadataAttribute};

/// The normalized form of an NFT's metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Default, ToSchema)]
#[schema(as = normalizedMetadata)]
pub struct NormalizedMetadata {
    /// Name or title of the NFT.
    pub name: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// URL of its image (inline SVG `image_data` as a `data:` URI).
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
    #[schema(schema_with = super::schemas::attribute_value)]
    pub value: Value,
    /// How the value should be displayed.
    pub display_type: Option<String>,
    /// For numeric values, the upper bound.
    #[schema(value_type = Option<f64>)]
    pub max_value: Option<Value>,
    /// How many tokens of the collection share this trait: not computed, so `null`.
    pub trait_count: Option<u64>,
    /// Display position; not given by the metadata standards, so `null`.
    pub order: Option<u64>,
}

impl From<MetadataAttribute> for Attribute {
    fn from(a: MetadataAttribute) -> Self {
        Self {
            trait_type: a.trait_type,
            value: a.value,
            display_type: a.display_type,
            max_value: a.max_value,
            trait_count: None,
            order: None,
        }
    }
}

/// `image`, `image_url`, or `image_data` as a `data:` URI.
fn image(o: &Map<String, Value>) -> Option<String> {
    if let Some(i) = first_text(o, &["image", "image_url"]) {
        return Some(i);
    }
    let data = first_text(o, &["image_data"])?;
    let data = data.trim();
    if data.starts_with("data:") {
        Some(data.to_string())
    } else if data.contains("<svg") {
        use base64::Engine;
        Some(format!(
            "data:image/svg+xml;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(data)
        ))
    } else {
        None
    }
}

impl NormalizedMetadata {
    /// Normalizes parsed metadata; anything but a JSON object gives the empty form.
    pub fn from_json(metadata: Option<&Value>) -> Self {
        let Some(m @ Value::Object(o)) = metadata else {
            return Self::default();
        };
        let attributes = attributes(m).into_iter().map(Attribute::from).collect();
        Self {
            name: first_text(o, &["name", "title"]),
            description: first_text(o, &["description"]),
            image: image(o),
            external_link: first_text(o, &["external_link", "external_url"]),
            animation_url: first_text(o, &["animation_url"]),
            attributes,
        }
    }

    /// [`Self::from_json`] for a token: with `erc1155_id` (the id as 64 lowercase hex digits,
    /// given for ERC1155 tokens only), `{id}` in the URL fields is replaced by it.
    pub fn for_token(metadata: Option<&Value>, erc1155_id: Option<&str>) -> Self {
        let mut n = Self::from_json(metadata);
        if let Some(id) = erc1155_id {
            for f in [&mut n.image, &mut n.animation_url, &mut n.external_link] {
                if let Some(v) = f.as_mut() {
                    *v = v.replace("{id}", id);
                }
            }
        }
        n
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

    #[test]
    fn traits_and_properties() {
        let m = json!({"traits": [{"trait_type": "Hat", "value": "cap", "max_value": "9"}]});
        let n = NormalizedMetadata::from_json(Some(&m));
        assert_eq!(n.attributes.len(), 1);
        assert_eq!(n.attributes[0].trait_type.as_deref(), Some("Hat"));
        assert_eq!(n.attributes[0].max_value, Some(json!(9)));

        let m = json!({
            "name": "Asset", "properties": {
                "simple_property": "example value",
                "rich_property": {"name": "Name", "value": "123", "display_value": "123 Example Value",
                                  "class": "emphasis"},
                "array_property": {"name": "Arr", "value": [1, 2, 3, 4]},
                "no_value": {"class": "x"},
                "nothing": null
            }
        });
        let n = NormalizedMetadata::from_json(Some(&m));
        let got: Vec<(Option<&str>, &Value)> = n
            .attributes
            .iter()
            .map(|a| (a.trait_type.as_deref(), &a.value))
            .collect();
        assert_eq!(
            got,
            vec![
                (Some("Arr"), &json!([1, 2, 3, 4])),
                (Some("Name"), &json!("123")),
                (Some("simple_property"), &json!("example value")),
            ]
        );
        // `attributes` wins over `properties`; an object of attributes reads like properties.
        let m = json!({"attributes": {"Color": "red"}, "properties": {"x": 1}});
        let n = NormalizedMetadata::from_json(Some(&m));
        assert_eq!(n.attributes.len(), 1);
        assert_eq!(n.attributes[0].trait_type.as_deref(), Some("Color"));
        assert!(n
            .attributes
            .iter()
            .all(|a| a.trait_count.is_none() && a.order.is_none()));
    }

    #[test]
    fn image_fallbacks() {
        let n = NormalizedMetadata::from_json(Some(&json!({"image_url": "https://i"})));
        assert_eq!(n.image.as_deref(), Some("https://i"));
        let svg = "<svg xmlns='http://www.w3.org/2000/svg'></svg>";
        let n = NormalizedMetadata::from_json(Some(&json!({"image_data": svg})));
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD.encode(svg);
        assert_eq!(n.image, Some(format!("data:image/svg+xml;base64,{b64}")));
        let n =
            NormalizedMetadata::from_json(Some(&json!({"image_data": "data:image/png;base64,AA"})));
        assert_eq!(n.image.as_deref(), Some("data:image/png;base64,AA"));
        let n = NormalizedMetadata::from_json(Some(&json!({"image_data": "garbage"})));
        assert_eq!(n.image, None);
        let n = NormalizedMetadata::from_json(Some(&json!({"image": "", "image_url": "u"})));
        assert_eq!(n.image.as_deref(), Some("u"));
    }

    #[test]
    fn erc1155_id_substitution() {
        let id = format!("{:064x}", 0xabcdefu64);
        let m = json!({"image": "https://x/{id}.png", "animation_url": "ipfs://c/{id}.mp4",
                       "external_url": "https://x/t/{id}", "name": "{id}"});
        let n = NormalizedMetadata::for_token(Some(&m), Some(&id));
        assert_eq!(n.image, Some(format!("https://x/{id}.png")));
        assert_eq!(n.animation_url, Some(format!("ipfs://c/{id}.mp4")));
        assert_eq!(n.external_link, Some(format!("https://x/t/{id}")));
        assert_eq!(n.name.as_deref(), Some("{id}"));
        // ERC721 (no id given): untouched.
        let n = NormalizedMetadata::for_token(Some(&m), None);
        assert_eq!(n.image.as_deref(), Some("https://x/{id}.png"));
    }
}
