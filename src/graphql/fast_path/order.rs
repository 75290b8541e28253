//! The response's fields in the order the document asks them.
//!
//! The GraphQL specification orders a response's fields as "CollectFields" meets them: in
//! document order, fragments expanded where they are spread. async-graphql resolves a query's
//! fields concurrently and keeps them in the order they finish (`FuturesUnordered`), so a field
//! that reads the database (a list) ends up after the ones answered from memory: asked
//! `transfers symbol address`, it answered `symbol, address, transfers`. [`in_document_order`]
//! puts every object of an answer back in the document's order. Pages written as JSON text
//! ([`super::written`]) are written in the selection's order already and are left as they are.

use async_graphql::parser::types::{
    DocumentOperations, ExecutableDocument, OperationDefinition, Selection, SelectionSet,
};
use async_graphql::{Name, Value};

/// Fragments nested deeper than this are not followed (validation refuses cycles; this only
/// bounds the walk).
const MAX_FRAGMENT_DEPTH: usize = 64;

/// The operation of `doc` that was executed: the one named `name`, or the only one.
fn operation<'d>(
    doc: &'d ExecutableDocument,
    name: Option<&str>,
) -> Option<&'d OperationDefinition> {
    match (&doc.operations, name) {
        (DocumentOperations::Single(op), _) => Some(&op.node),
        (DocumentOperations::Multiple(ops), Some(n)) => ops.get(n).map(|op| &op.node),
        (DocumentOperations::Multiple(ops), None) if ops.len() == 1 => {
            ops.values().next().map(|op| &op.node)
        }
        (DocumentOperations::Multiple(_), None) => None,
    }
}

/// Orders every object of `data` (the answer to `doc`'s operation `name`) as the document asks.
pub fn in_document_order(data: &mut Value, doc: &ExecutableDocument, name: Option<&str>) {
    if let Some(op) = operation(doc, name) {
        order(data, &[&op.selection_set.node], doc);
    }
}

/// The response keys `sets` select, in the order they are first met, each with the
/// sub-selections of every field answering under it.
type Collected<'d> = Vec<(&'d Name, Vec<&'d SelectionSet>)>;

fn collect<'d>(
    set: &'d SelectionSet,
    doc: &'d ExecutableDocument,
    depth: usize,
    out: &mut Collected<'d>,
) {
    for item in &set.items {
        match &item.node {
            Selection::Field(f) => {
                let key = &f.node.response_key().node;
                let sub = &f.node.selection_set.node;
                match out.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, subs)) => subs.push(sub),
                    None => out.push((key, vec![sub])),
                }
            }
            Selection::FragmentSpread(s) if depth < MAX_FRAGMENT_DEPTH => {
                if let Some(frag) = doc.fragments.get(&s.node.fragment_name.node) {
                    collect(&frag.node.selection_set.node, doc, depth + 1, out);
                }
            }
            Selection::InlineFragment(i) if depth < MAX_FRAGMENT_DEPTH => {
                collect(&i.node.selection_set.node, doc, depth + 1, out);
            }
            Selection::FragmentSpread(_) | Selection::InlineFragment(_) => {}
        }
    }
}

/// Orders `value` (answering `sets`) and everything inside it.
fn order(value: &mut Value, sets: &[&SelectionSet], doc: &ExecutableDocument) {
    match value {
        Value::List(items) => {
            for item in items {
                order(item, sets, doc);
            }
        }
        Value::Object(fields) => {
            let mut collected = Collected::new();
            for set in sets {
                collect(set, doc, 0, &mut collected);
            }
            let place = |key: &Name| {
                collected
                    .iter()
                    .position(|(k, _)| *k == key)
                    .unwrap_or(usize::MAX)
            };
            fields.sort_by_cached_key(|key, _| place(key));
            for (key, subs) in &collected {
                if let Some(v) = fields.get_mut(*key) {
                    order(v, subs, doc);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_graphql::parser::parse_query;

    fn ordered(query: &str, data: serde_json::Value) -> String {
        let doc = parse_query(query).unwrap_or_else(|e| panic!("{e}"));
        let mut value = Value::from_json(data).unwrap_or_else(|e| panic!("{e}"));
        in_document_order(&mut value, &doc, None);
        serde_json::to_string(&value).unwrap_or_default()
    }

    #[test]
    fn fields_follow_the_document_through_aliases_fragments_and_lists() {
        let q = "query { t: token { ...F transfers { edges { node { b a } } } symbol } }
                 fragment F on Token { address ... on Token { name } }";
        let data = serde_json::json!({"t": {"symbol": "S", "name": "N",
            "transfers": {"edges": [{"node": {"a": 1, "b": 2}}, {"node": {"a": 3, "b": 4}}]},
            "address": "0x"}});
        assert_eq!(
            ordered(q, data),
            r#"{"t":{"address":"0x","name":"N","transfers":{"edges":[{"node":{"b":2,"a":1}},{"node":{"b":4,"a":3}}]},"symbol":"S"}}"#
        );
    }

    #[test]
    fn a_key_asked_twice_merges_its_selections_in_order() {
        let q = "{ w { n { b } n { a b } } }";
        let data = serde_json::json!({"w": {"n": {"a": 1, "b": 2}}});
        assert_eq!(ordered(q, data), r#"{"w":{"n":{"b":2,"a":1}}}"#);
    }
}
