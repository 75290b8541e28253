//! The JSON body of `POST /nft/{address}/nfts-by-traits`, parsed into a [`TraitFilter`] at the
//! boundary. Anything else is a 400 naming `body` and the rule.
//!
//! Accepted forms (a trait type's values are alternatives, trait types must all match):
//!
//! - `{"traits": {"Background": "Blue", "Level": [3, 4]}}`: trait type → a value or a list;
//! - `{"traits": [{"trait_type": "Background", "value": "Blue"}, …]}`: the metadata's own form;
//! - `{}` or `{"traits": {}}`: no trait asked for, every NFT of the collection.
//!
//! A value is a string, a number or a boolean, matched against the trait's value as text (`3`
//! matches the metadata's `3` and `"3"`). Other top-level keys are ignored, as unknown query
//! parameters are.

use serde_json::Value;

use crate::query::TraitFilter;
use crate::types::metadata::trait_value_text;
use crate::types::MAX_LIST_LEN;

use super::super::error::ApiError;

/// Longest trait type or value accepted.
const MAX_TEXT: usize = 1024;

/// The refusal of a bad body.
fn bad(rule: impl Into<String>) -> ApiError {
    ApiError::bad("body", rule)
}

/// A wanted value: a string, number or boolean, as text.
fn value(trait_type: &str, v: &Value) -> Result<String, ApiError> {
    match v {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => {
            let text = trait_value_text(v).unwrap_or_default();
            if text.chars().count() > MAX_TEXT {
                return Err(bad(format!(
                    "a value of trait '{trait_type}' is longer than {MAX_TEXT} characters"
                )));
            }
            Ok(text)
        }
        other => Err(bad(format!(
            "the value of trait '{trait_type}' is {}; expected a string, a number or a boolean",
            kind(other)
        ))),
    }
}

/// What a JSON value is, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A trait type: non-blank text of at most [`MAX_TEXT`] characters.
fn trait_type(t: &str) -> Result<String, ApiError> {
    if t.trim().is_empty() {
        return Err(bad("a trait type is empty"));
    }
    if t.chars().count() > MAX_TEXT {
        return Err(bad(format!(
            "a trait type is longer than {MAX_TEXT} characters"
        )));
    }
    Ok(t.to_string())
}

/// Parses the request body (see the module docs).
pub fn parse(bytes: &[u8]) -> Result<TraitFilter, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(bad(
            "is empty; send a JSON object such as {\"traits\": {\"Background\": \"Blue\"}}",
        ));
    }
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|e| bad(format!("is not valid JSON ({e})")))?;
    let Value::Object(doc) = doc else {
        return Err(bad(format!(
            "is {}; expected a JSON object such as {{\"traits\": {{\"Background\": \"Blue\"}}}}",
            kind(&doc)
        )));
    };
    let mut pairs = Vec::new();
    match doc.get("traits") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (t, v) in map {
                let t = trait_type(t)?;
                match v {
                    Value::Array(values) if values.is_empty() => {
                        return Err(bad(format!("trait '{t}' lists no value")));
                    }
                    Value::Array(values) => {
                        for v in values {
                            pairs.push((t.clone(), value(&t, v)?));
                        }
                    }
                    v => pairs.push((t.clone(), value(&t, v)?)),
                }
            }
        }
        Some(Value::Array(items)) => {
            for item in items {
                let t = item
                    .get("trait_type")
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        bad("each entry of traits must be {\"trait_type\": text, \"value\": …}")
                    })?;
                let t = trait_type(t)?;
                let v = item.get("value").unwrap_or(&Value::Null);
                pairs.push((t.clone(), value(&t, v)?));
            }
        }
        Some(other) => {
            return Err(bad(format!(
                "traits is {}; expected an object (trait type → value or list of values) or an \
                 array of {{\"trait_type\", \"value\"}}",
                kind(other)
            )))
        }
    }
    if pairs.len() > MAX_LIST_LEN {
        return Err(bad(format!(
            "asks for {} trait values; at most {MAX_LIST_LEN}",
            pairs.len()
        )));
    }
    Ok(TraitFilter::new(pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(body: &str) -> TraitFilter {
        parse(body.as_bytes()).unwrap_or_else(|e| panic!("{body}: {e:?}"))
    }

    fn message(body: &str) -> String {
        match parse(body.as_bytes()) {
            Ok(f) => panic!("{body} was accepted: {f:?}"),
            Err(ApiError::BadParam { param, rule }) => format!("{param}: {rule}"),
            Err(other) => panic!("{body}: {other:?}"),
        }
    }

    #[test]
    fn both_forms_say_the_same() {
        let map = ok(r#"{"traits": {"Hat": ["cap", "crown"], "Level": 3, "Shiny": true}}"#);
        let list = ok(r#"{"traits": [{"trait_type": "Hat", "value": "cap"},
            {"trait_type": "Level", "value": 3}, {"trait_type": "Hat", "value": "crown"},
            {"trait_type": "Shiny", "value": true}]}"#);
        assert_eq!(map, list);
        let expected = TraitFilter::new([
            ("Hat".to_string(), "cap".to_string()),
            ("Hat".to_string(), "crown".to_string()),
            ("Level".to_string(), "3".to_string()),
            ("Shiny".to_string(), "true".to_string()),
        ]);
        assert_eq!(map, expected);
        assert_eq!(ok("{}"), TraitFilter::default());
        assert_eq!(ok(r#"{"traits": {}, "other": 1}"#), TraitFilter::default());
    }

    #[test]
    fn bad_bodies_name_the_rule() {
        for (body, mention) in [
            ("", "is empty"),
            ("  ", "is empty"),
            ("{", "not valid JSON"),
            ("[1]", "is an array"),
            (r#"{"traits": "Hat"}"#, "traits is a string"),
            (r#"{"traits": {"Hat": null}}"#, "is null"),
            (r#"{"traits": {"Hat": {"a": 1}}}"#, "is an object"),
            (r#"{"traits": {"Hat": []}}"#, "lists no value"),
            (r#"{"traits": {" ": "x"}}"#, "trait type is empty"),
            (r#"{"traits": [{"value": "x"}]}"#, "each entry"),
            (r#"{"traits": [{"trait_type": "Hat"}]}"#, "is null"),
        ] {
            let m = message(body);
            assert!(
                m.starts_with("body: ") && m.contains(mention),
                "{body}: {m}"
            );
        }
        let many: Vec<String> = (0..=MAX_LIST_LEN).map(|i| format!("\"v{i}\"")).collect();
        let m = message(&format!(
            "{{\"traits\": {{\"Hat\": [{}]}}}}",
            many.join(",")
        ));
        assert!(m.contains("at most"), "{m}");
        let long = "x".repeat(MAX_TEXT + 1);
        assert!(message(&format!("{{\"traits\": {{\"{long}\": 1}}}}")).contains("longer"));
    }
}
