//! Pages written as JSON while the request runs, and the response that carries them.
//!
//! A page of plain nodes ([`super::plain`]) is the bulk of a list's answer. Built as an
//! `async_graphql::Value`, each of its fields is one string copy and one hashed map insertion,
//! walked again to serialize the response and once more to free it. Over HTTP the page goes
//! into the response as JSON text instead: the edges' resolver writes it into the request's
//! [`Written`] and answers with a marker, and [`Written::response_json`] writes the response
//! with each marker replaced by its text.
//!
//! A marker is an enum value named `$written` and a number. `$` cannot start a GraphQL name,
//! so no enum of any schema, and no data, can produce one: a marker is only ever the edges'
//! own. In-process callers do not add a [`Written`] to the request and get ordinary values.

use std::fmt::Write as _;
use std::sync::Mutex;

use async_graphql::{Name, Response, Value};

/// The name of every marker, followed by its page's number.
const MARKER: &str = "$written";

/// The pages written during one request (add it to the request's data as an `Arc<Written>`).
#[derive(Default)]
pub struct Written {
    pages: Mutex<Vec<String>>,
}

impl Written {
    /// Keeps `json` (one whole JSON value) and returns the marker that stands for it in the
    /// response.
    pub fn put(&self, json: String) -> Value {
        let mut pages = self.lock();
        let marker = Value::Enum(Name::new(format!("{MARKER}{}", pages.len())));
        pages.push(json);
        marker
    }

    /// `resp` as JSON, exactly as `serde_json` writes an `async_graphql::Response`, with each
    /// marker replaced by the page it stands for.
    pub fn response_json(&self, resp: &Response) -> Result<String, serde_json::Error> {
        let pages = self.lock();
        let mut out = String::with_capacity(256 + pages.iter().map(String::len).sum::<usize>());
        out.push_str("{\"data\":");
        write_value(&mut out, &resp.data, &pages)?;
        if !resp.extensions.is_empty() {
            out.push_str(",\"extensions\":");
            out.push_str(&serde_json::to_string(&resp.extensions)?);
        }
        if !resp.errors.is_empty() {
            out.push_str(",\"errors\":");
            out.push_str(&serde_json::to_string(&resp.errors)?);
        }
        out.push('}');
        Ok(out)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        // Pages are only ever pushed whole: a panic elsewhere cannot leave one half-written.
        self.pages.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The page a marker stands for.
fn page<'p>(name: &str, pages: &'p [String]) -> Option<&'p str> {
    let n: usize = name.strip_prefix(MARKER)?.parse().ok()?;
    pages.get(n).map(String::as_str)
}

fn write_value(out: &mut String, v: &Value, pages: &[String]) -> Result<(), serde_json::Error> {
    match v {
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item, pages)?;
            }
            out.push(']');
        }
        Value::Object(fields) => {
            out.push('{');
            for (i, (key, value)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_text(out, key);
                out.push(':');
                write_value(out, value, pages)?;
            }
            out.push('}');
        }
        Value::String(s) => push_text(out, s),
        Value::Enum(name) => match page(name, pages) {
            Some(json) => out.push_str(json),
            None => push_text(out, name),
        },
        Value::Number(n) => push_display(out, n),
        other => out.push_str(&serde_json::to_string(other)?),
    }
    Ok(())
}

/// Appends `v`'s `Display` form (a number's is its JSON form).
pub fn push_display(out: &mut String, v: &impl std::fmt::Display) {
    // Writing into a `String` cannot fail.
    write!(out, "{v}").unwrap_or_default();
}

/// Appends `s` as a JSON string, escaped as `serde_json` escapes it: `"`, `\` and the control
/// characters below U+0020 (as `\b`, `\t`, `\n`, `\f`, `\r` or `\u00XX`); nothing else.
pub fn push_text(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    // Most texts (addresses, hashes, numbers, names) need no escape: find the first byte that
    // does, eight at a time.
    let mut start = 0;
    while start + 8 <= bytes.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[start..start + 8]);
        if needs_escape(u64::from_le_bytes(word)) {
            break;
        }
        start += 8;
    }
    if bytes[start..].iter().all(|&b| escape(b).is_none()) {
        out.push_str(s);
    } else {
        out.push_str(&s[..start]);
        push_escaped(out, &s[start..]);
    }
    out.push('"');
}

/// Whether any byte of `word` is `"`, `\` or below 0x20 (the word-at-a-time test for a zero
/// byte, and for a byte below a bound).
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGH != 0;
    below_space
        || has_zero(word ^ (ONES * u64::from(b'"')))
        || has_zero(word ^ (ONES * u64::from(b'\\')))
}

/// How JSON writes byte `b` of a text when it must be escaped.
fn escape(b: u8) -> Option<&'static str> {
    Some(match b {
        b'"' => "\\\"",
        b'\\' => "\\\\",
        b'\n' => "\\n",
        b'\r' => "\\r",
        b'\t' => "\\t",
        0x08 => "\\b",
        0x0c => "\\f",
        0..=0x1f => "",
        _ => return None,
    })
}

fn push_escaped(out: &mut String, s: &str) {
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let Some(escaped) = escape(b) else {
            continue;
        };
        out.push_str(&s[start..i]);
        if escaped.is_empty() {
            push_display(out, &format_args!("\\u{b:04x}"));
        } else {
            out.push_str(escaped);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_graphql::indexmap::IndexMap;
    use async_graphql::{ErrorExtensionValues, Number, PathSegment, Pos, ServerError};

    fn object(fields: Vec<(&str, Value)>) -> Value {
        Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (Name::new(k), v))
                .collect::<IndexMap<_, _>>(),
        )
    }

    fn awkward_text() -> String {
        let mut s: String = (0u8..0x80).map(char::from).collect();
        s.push_str("é✓😀 \u{2028}\u{7f}/");
        s
    }

    #[test]
    fn text_is_escaped_as_serde_json_escapes_it() {
        for s in ["", "plain", "\"", "\\", "a\"b\\c\n", &awkward_text()] {
            let mut out = String::new();
            push_text(&mut out, s);
            assert_eq!(out, serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn an_escape_is_found_at_every_position() {
        for len in 1..20 {
            for at in 0..len {
                for special in ['"', '\\', '\n', '\u{1}', '\u{1f}'] {
                    let mut s: String = "a".repeat(len);
                    s.replace_range(at..=at, &special.to_string());
                    let mut out = String::new();
                    push_text(&mut out, &s);
                    assert_eq!(out, serde_json::to_string(&s).unwrap(), "{s:?}");
                }
            }
        }
    }

    #[test]
    fn a_response_without_markers_is_written_as_serde_json_writes_it() {
        let data = object(vec![
            ("n", Value::Null),
            ("b", Value::Boolean(true)),
            ("i", Value::Number(Number::from(-42))),
            ("u", Value::Number(Number::from(u64::MAX))),
            ("f", Value::Number(Number::from_f64(1.5e300).unwrap())),
            ("s", Value::String(awkward_text())),
            ("e", Value::Enum(Name::new("ERC721"))),
            ("e2", Value::Enum(Name::new("$written7"))),
            (
                "l",
                Value::List(vec![Value::List(vec![]), object(vec![]), Value::Null]),
            ),
        ]);
        let mut resp = Response::new(data);
        let mut err = ServerError::new("bad \"thing\"", Some(Pos { line: 1, column: 2 }));
        err.path = vec![PathSegment::Field("a".into()), PathSegment::Index(3)];
        let mut ext = ErrorExtensionValues::default();
        ext.set("code", "BAD_USER_INPUT");
        err.extensions = Some(ext);
        resp.errors.push(err);
        resp.extensions
            .insert("cost".into(), Value::Number(Number::from(7)));
        let written = Written::default();
        assert_eq!(
            written.response_json(&resp).unwrap(),
            serde_json::to_string(&resp).unwrap()
        );
        let empty = Response::new(Value::Null);
        assert_eq!(
            written.response_json(&empty).unwrap(),
            serde_json::to_string(&empty).unwrap()
        );
    }

    #[test]
    fn each_marker_is_replaced_by_its_page() {
        let written = Written::default();
        let first = written.put("[{\"a\":1}]".into());
        let second = written.put("[]".into());
        let data = object(vec![
            ("x", object(vec![("edges", second)])),
            ("y", object(vec![("edges", first)])),
        ]);
        let json = written.response_json(&Response::new(data)).unwrap();
        assert_eq!(
            json,
            r#"{"data":{"x":{"edges":[]},"y":{"edges":[{"a":1}]}}}"#
        );
    }
}
