//! Parsed documents kept by their text: an application sends the same few documents again and
//! again with new variables, and parsing one costs more than copying its parsed form.
//!
//! Only parsing is saved. Everything checked about a document on every request still runs on
//! the copy (recursion depth, validation against the schema and the request's variables,
//! complexity and depth limits), and a document that does not parse is never kept: the
//! executor reports its error each time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_graphql::parser::types::ExecutableDocument;

/// The most documents kept; when full, one is dropped to make room for a new one.
pub const CAPACITY: usize = 512;
/// The longest document kept, in bytes; longer ones are parsed on every request (together
/// with [`CAPACITY`], this bounds the cache's memory to a few MiB).
pub const MAX_TEXT: usize = 8 * 1024;

/// A bounded map from a document's text to its parsed form.
#[derive(Default)]
pub struct Documents {
    parsed: Mutex<HashMap<String, Arc<ExecutableDocument>>>,
}

impl Documents {
    /// The parsed form of `text`, if kept (shared: the executor takes a copy, the answer's
    /// field order reads this one).
    pub fn get(&self, text: &str) -> Option<Arc<ExecutableDocument>> {
        self.lock().get(text).cloned()
    }

    /// Keeps `doc` as the parsed form of `text` (unless `text` is too long to keep).
    pub fn put(&self, text: &str, doc: &Arc<ExecutableDocument>) {
        if text.len() > MAX_TEXT {
            return;
        }
        let mut parsed = self.lock();
        if parsed.len() >= CAPACITY && !parsed.contains_key(text) {
            if let Some(old) = parsed.keys().next().cloned() {
                parsed.remove(&old);
            }
        }
        parsed.insert(text.to_string(), doc.clone());
    }

    /// How many documents are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no document is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<ExecutableDocument>>> {
        // A panic while holding the lock cannot leave the map half-changed in a way that
        // matters: every entry is a whole parsed document.
        self.parsed.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_graphql::parser::parse_query;

    fn doc(text: &str) -> Arc<ExecutableDocument> {
        Arc::new(parse_query(text).expect("a valid document"))
    }

    #[test]
    fn keeps_a_document_by_its_text() {
        let docs = Documents::default();
        let text = "{ a }";
        assert!(docs.get(text).is_none());
        docs.put(text, &doc(text));
        let kept = docs.get(text).expect("kept");
        assert_eq!(format!("{kept:?}"), format!("{:?}", doc(text)));
        assert!(docs.get("{ b }").is_none());
    }

    #[test]
    fn stays_within_its_capacity() {
        let docs = Documents::default();
        for i in 0..CAPACITY + 10 {
            let text = format!("{{ f{i} }}");
            docs.put(&text, &doc(&text));
        }
        assert_eq!(docs.len(), CAPACITY);
        let last = format!("{{ f{} }}", CAPACITY + 9);
        assert!(docs.get(&last).is_some(), "the newest document is kept");
    }

    #[test]
    fn never_keeps_a_long_document() {
        let docs = Documents::default();
        let text = format!("{{ a {} }}", " ".repeat(MAX_TEXT));
        docs.put(&text, &doc(&text));
        assert!(docs.is_empty());
    }
}
