//! The direct path for a list's nodes. A node's fields are answered from its page's finished
//! answer, in memory; resolving each of them as its own future (async-graphql's way: one boxed
//! future, one context and one map insertion per field, for every node of the page) costs more
//! server CPU than the answer itself. When a node's selection holds only plain fields (no
//! arguments, directives, fragments or sub-selections) and the node can answer every one of them
//! from what it holds ([`PlainNode::plain`]), [`Plain`] writes the node's object in one pass;
//! anything else goes to the node's ordinary resolver, unchanged. Both paths give the same
//! values (`tests/api/graphql_api.rs` asks the same pages both ways); `@skip` and `@include`
//! are applied by async-graphql before a selection reaches either.

use std::borrow::Cow;

use async_graphql::indexmap::IndexMap;
use async_graphql::parser::types::{Field, Selection, SelectionSet};
use async_graphql::registry::Registry;
use async_graphql::{ContextSelectionSet, OutputType, Positioned, ServerResult, Value};

/// A list's node type: the plain fields it can answer from what it holds.
pub trait PlainNode {
    /// The value of the plain field `name` (a field without arguments or sub-selection) when
    /// the node holds what it takes; `None` leaves the node to its ordinary resolver. No field
    /// is plain unless the node says so.
    fn plain(&self, _name: &str) -> Option<Value> {
        None
    }
}

/// A list's edge type: its cursor and its node.
pub trait PlainEdge {
    /// The node type.
    type Node: OutputType + PlainNode;
    /// The cursor that resumes right after this edge.
    fn cursor_text(&self) -> String;
    /// The node.
    fn record(&self) -> &Self::Node;
}

/// A list's node, resolved directly when its selection allows ([`plain_object`]).
pub struct Plain<'a, N>(pub &'a N);

impl<N: OutputType + PlainNode> OutputType for Plain<'_, N> {
    fn type_name() -> Cow<'static, str> {
        N::type_name()
    }

    fn create_type_info(registry: &mut Registry) -> String {
        N::create_type_info(registry)
    }

    async fn resolve(
        &self,
        ctx: &ContextSelectionSet<'_>,
        field: &Positioned<Field>,
    ) -> ServerResult<Value> {
        match plain_object(&ctx.item.node, N::type_name(), |f| self.0.plain_leaf(f)) {
            Some(object) => Ok(object),
            None => self.0.resolve(ctx, field).await,
        }
    }
}

/// A page's edges, written in one pass when each edge's selection is `cursor` and a `node`
/// whose selection is plain ([`plain_object`]); otherwise resolved as an ordinary list.
pub struct PlainEdges<'a, E>(pub &'a [E]);

impl<E: OutputType + PlainEdge> OutputType for PlainEdges<'_, E> {
    fn type_name() -> Cow<'static, str> {
        <Vec<E> as OutputType>::type_name()
    }

    fn qualified_type_name() -> String {
        <Vec<E> as OutputType>::qualified_type_name()
    }

    fn create_type_info(registry: &mut Registry) -> String {
        <Vec<E> as OutputType>::create_type_info(registry)
    }

    async fn resolve(
        &self,
        ctx: &ContextSelectionSet<'_>,
        field: &Positioned<Field>,
    ) -> ServerResult<Value> {
        let edges: Option<Vec<Value>> = self
            .0
            .iter()
            .map(|edge| plain_object(&ctx.item.node, E::type_name(), |f| plain_edge(edge, f)))
            .collect();
        match edges {
            Some(edges) => Ok(Value::List(edges)),
            None => self.0.resolve(ctx, field).await,
        }
    }
}

/// The object of a selection whose every item is a field `answer` can give (a field with a
/// sub-selection comes with that selection); `None` when any item is not.
fn plain_object<'s>(
    selection: &'s SelectionSet,
    type_name: Cow<'static, str>,
    answer: impl Fn(Asked<'s>) -> Option<Value>,
) -> Option<Value> {
    let items = &selection.items;
    let mut object = IndexMap::with_capacity(items.len());
    for item in items {
        let Selection::Field(field) = &item.node else {
            return None;
        };
        let field = &field.node;
        if !field.arguments.is_empty() || !field.directives.is_empty() {
            return None;
        }
        let name = field.name.node.as_str();
        let value = match name {
            "__typename" => Value::String(type_name.to_string()),
            _ => answer(Asked {
                name,
                selection: &field.selection_set.node,
            })?,
        };
        // A key asked twice is merged by the ordinary resolver.
        if object
            .insert(field.response_key().node.clone(), value)
            .is_some()
        {
            return None;
        }
    }
    Some(Value::Object(object))
}

/// A field asked of an object, with its sub-selection (empty for a leaf).
#[derive(Clone, Copy)]
pub struct Asked<'s> {
    /// The field's name in the schema.
    pub name: &'s str,
    /// What is asked of its value.
    pub selection: &'s SelectionSet,
}

/// An edge's `cursor`, and its `node` when the node's own selection is plain.
fn plain_edge<E: PlainEdge>(edge: &E, asked: Asked<'_>) -> Option<Value> {
    match asked.name {
        "cursor" if asked.selection.items.is_empty() => Some(Value::String(edge.cursor_text())),
        "node" => plain_object(asked.selection, E::Node::type_name(), |f| {
            edge.record().plain_leaf(f)
        }),
        _ => None,
    }
}

trait PlainLeaf {
    /// A leaf field's value ([`PlainNode::plain`]); a field with a sub-selection is not plain.
    fn plain_leaf(&self, asked: Asked<'_>) -> Option<Value>;
}

impl<N: PlainNode> PlainLeaf for N {
    fn plain_leaf(&self, asked: Asked<'_>) -> Option<Value> {
        if !asked.selection.items.is_empty() {
            return None;
        }
        self.plain(asked.name)
    }
}

/// `Some(v)` as a nullable GraphQL value.
pub fn nullable<T>(v: Option<T>, f: impl FnOnce(T) -> Value) -> Value {
    v.map_or(Value::Null, f)
}

/// A string value.
pub fn text(s: impl Into<String>) -> Value {
    Value::String(s.into())
}
