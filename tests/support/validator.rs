//! A validator for the subset of JSON Schema (2020-12, as OpenAPI 3.1 uses it) that the
//! document uses. It refuses keywords and patterns it does not know, so a new one in the
//! document cannot be skipped silently.

use serde_json::Value;

/// The schema (or other object) a local `$ref` (`#/components/...`) points to.
pub fn resolve_ref<'a>(doc: &'a Value, r: &str) -> Option<&'a Value> {
    let pointer = r.strip_prefix('#')?;
    doc.pointer(pointer).filter(|v| v.is_object())
}

const ANNOTATIONS: &[&str] = &[
    "description",
    "example",
    "examples",
    "format",
    "default",
    "title",
    "deprecated",
];

/// The patterns the document uses, each with an equivalent check.
fn pattern_matches(pattern: &str, s: &str) -> bool {
    let hex_lower =
        |t: &str| !t.is_empty() && t.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    match pattern {
        "^0x[0-9a-f]{40}$" => s.len() == 42 && s.starts_with("0x") && hex_lower(&s[2..]),
        "^0x[0-9a-f]{64}$" => s.len() == 66 && s.starts_with("0x") && hex_lower(&s[2..]),
        "^0[xX][0-9a-fA-F]{40}$" => {
            s.len() == 42
                && (s.starts_with("0x") || s.starts_with("0X"))
                && s[2..].bytes().all(|b| b.is_ascii_hexdigit())
        }
        "^[0-9a-f]{32}$" => s.len() == 32 && hex_lower(s),
        "^[0-9]+$" => digits(s),
        "^([0-9]+|0x[0-9a-f]+)$" => digits(s) || s.strip_prefix("0x").is_some_and(hex_lower),
        "^[0-9]+(\\.[0-9]+)?$" => match s.split_once('.') {
            Some((i, f)) => digits(i) && digits(f),
            None => digits(s),
        },
        "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$" => {
            let b = s.as_bytes();
            b.len() == 24
                && b.iter().enumerate().all(|(i, c)| match i {
                    4 | 7 => *c == b'-',
                    10 => *c == b'T',
                    13 | 16 => *c == b':',
                    19 => *c == b'.',
                    23 => *c == b'Z',
                    _ => c.is_ascii_digit(),
                })
        }
        other => panic!("the validator does not know the pattern {other}: teach it"),
    }
}

fn json_type_matches(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        other => panic!("unknown JSON type {other}"),
    }
}

/// Checks `v` against `schema`; every violation is pushed to `errors` with its JSON path.
pub fn validate(doc: &Value, schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(s) = schema.as_object() else {
        panic!("{at}: schema is not an object: {schema}");
    };
    for (k, rule) in s {
        match k.as_str() {
            k if ANNOTATIONS.contains(&k) => {}
            "$ref" => {
                let r = rule.as_str().unwrap_or_default();
                let target = resolve_ref(doc, r).unwrap_or_else(|| panic!("unresolved {r}"));
                validate(doc, target, v, at, errors);
            }
            "oneOf" => {
                let matching = rule
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|sub| {
                        let mut e = Vec::new();
                        validate(doc, sub, v, at, &mut e);
                        e.is_empty()
                    })
                    .count();
                if matching != 1 {
                    errors.push(format!("{at}: {v} matches {matching} of oneOf {rule}"));
                }
            }
            "type" => {
                let ok = match rule {
                    Value::String(t) => json_type_matches(t, v),
                    Value::Array(ts) => ts
                        .iter()
                        .any(|t| json_type_matches(t.as_str().unwrap_or_default(), v)),
                    _ => panic!("{at}: bad type {rule}"),
                };
                if !ok {
                    errors.push(format!("{at}: {v} is not of type {rule}"));
                }
            }
            "enum" => {
                if !rule.as_array().is_some_and(|e| e.contains(v)) {
                    errors.push(format!("{at}: {v} is not one of {rule}"));
                }
            }
            "pattern" => {
                if let Some(text) = v.as_str() {
                    if !pattern_matches(rule.as_str().unwrap_or_default(), text) {
                        errors.push(format!("{at}: {v} does not match {rule}"));
                    }
                }
            }
            "maxLength" => {
                if let (Some(text), Some(max)) = (v.as_str(), rule.as_u64()) {
                    if text.chars().count() as u64 > max {
                        errors.push(format!("{at}: longer than {max}"));
                    }
                }
            }
            "minimum" | "maximum" => {
                if let (Some(n), Some(bound)) = (v.as_f64(), rule.as_f64()) {
                    if (k == "minimum" && n < bound) || (k == "maximum" && n > bound) {
                        errors.push(format!("{at}: {v} breaks {k} {bound}"));
                    }
                }
            }
            "maxItems" => {
                if let (Some(a), Some(max)) = (v.as_array(), rule.as_u64()) {
                    if a.len() as u64 > max {
                        errors.push(format!("{at}: more than {max} items"));
                    }
                }
            }
            "items" => {
                for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                    validate(doc, rule, item, &format!("{at}[{i}]"), errors);
                }
            }
            "required" => {
                if let Some(o) = v.as_object() {
                    for name in rule.as_array().into_iter().flatten() {
                        let name = name.as_str().unwrap_or_default();
                        if !o.contains_key(name) {
                            errors.push(format!("{at}: required field {name} is missing"));
                        }
                    }
                }
            }
            "properties" => {
                // Strict: an answer carries exactly the documented fields.
                let props = rule.as_object().expect("properties is an object");
                for (name, value) in v.as_object().into_iter().flatten() {
                    match props.get(name) {
                        Some(p) => validate(doc, p, value, &format!("{at}.{name}"), errors),
                        None => errors.push(format!("{at}: undocumented field {name}")),
                    }
                }
            }
            other => panic!("{at}: the validator does not know the keyword {other}: teach it"),
        }
    }
}
