//! The direct path for a list's nodes. A node's fields are answered from its page's finished
//! answer, in memory; resolving each of them as its own future (async-graphql's way: one boxed
//! future, one context and one map insertion per field, for every node of the page) costs more
//! server CPU than the answer itself. When a node's selection holds only plain fields (no
//! arguments, directives, fragments or sub-selections) and the node can answer every one of them
//! from what it holds ([`PlainNode::plain`]), the page is written in one pass: over HTTP as JSON
//! text ([`super::written`]), in process as values; anything else goes to the node's ordinary
//! resolver, unchanged. Every path gives the same values (`tests/api/graphql_api.rs` asks the
//! same pages each way); `@skip` and `@include` are applied by async-graphql before a selection
//! reaches any of them.
//!
//! What a selection asks is read once per page ([`NodePlan`], [`EdgePlan`]) and then answered
//! for each node.

use std::borrow::Cow;
use std::sync::Arc;

use async_graphql::indexmap::IndexMap;
use async_graphql::parser::types::{Field, Selection, SelectionSet};
use async_graphql::registry::Registry;
use async_graphql::{
    ContextSelectionSet, Name, Number, OutputType, Positioned, ServerResult, Value,
};

use super::written::{push_display, push_text, Written};
use crate::types::{
    iso8601_ms, iso8601_secs, push_iso8601_ms, push_iso8601_secs, Address, Uint256,
};

/// The value of a plain field.
pub enum Leaf<'a> {
    /// `null`.
    Null,
    /// A `Boolean`.
    Bool(bool),
    /// An `Int` or another number.
    Number(Number),
    /// A `String` (or a string scalar).
    Text(Cow<'a, str>),
    /// A value of an enum.
    Enum(&'static str),
    /// An address (the `Address` scalar), written without an intermediate string.
    Address(Address),
    /// A uint256 as a string of decimal digits (the `Uint256` scalar), written likewise.
    Decimal(Uint256),
    /// A uint256 divided by `10^decimals`, as a decimal string ([`Uint256::to_decimal_scaled`]).
    Scaled(Uint256, u32),
    /// Unix seconds as an ISO 8601 string ([`iso8601_secs`]).
    Time(u64),
    /// Unix milliseconds as an ISO 8601 string ([`iso8601_ms`]).
    Millis(i64),
}

impl Leaf<'_> {
    fn into_value(self) -> Value {
        match self {
            Leaf::Null => Value::Null,
            Leaf::Bool(b) => Value::Boolean(b),
            Leaf::Number(n) => Value::Number(n),
            Leaf::Text(s) => Value::String(s.into_owned()),
            Leaf::Enum(e) => Value::Enum(Name::new(e)),
            Leaf::Address(a) => Value::String(a.to_string()),
            Leaf::Decimal(u) => Value::String(u.to_decimal()),
            Leaf::Scaled(u, d) => Value::String(u.to_decimal_scaled(d)),
            Leaf::Time(s) => Value::String(iso8601_secs(s)),
            Leaf::Millis(ms) => Value::String(iso8601_ms(ms)),
        }
    }

    fn write(&self, out: &mut String) {
        match self {
            Leaf::Null => out.push_str("null"),
            Leaf::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Leaf::Number(n) => push_display(out, n),
            Leaf::Text(s) => push_text(out, s),
            Leaf::Enum(e) => push_text(out, e),
            Leaf::Address(a) => quoted(out, |out| {
                out.extend(a.hex().iter().copied().map(char::from));
            }),
            // Digits, dots and the date's characters need no escape.
            Leaf::Decimal(u) => quoted(out, |out| u.push_decimal(out)),
            Leaf::Scaled(u, d) => quoted(out, |out| u.push_decimal_scaled(out, *d)),
            Leaf::Time(s) => quoted(out, |out| push_iso8601_secs(out, *s)),
            Leaf::Millis(ms) => quoted(out, |out| push_iso8601_ms(out, *ms)),
        }
    }
}

/// Appends `"`, what `write` appends, and `"`: a JSON string that needs no escape.
fn quoted(out: &mut String, write: impl FnOnce(&mut String)) {
    out.push('"');
    write(out);
    out.push('"');
}

impl From<Address> for Leaf<'_> {
    fn from(a: Address) -> Self {
        Leaf::Address(a)
    }
}

impl From<bool> for Leaf<'_> {
    fn from(b: bool) -> Self {
        Leaf::Bool(b)
    }
}

impl From<u64> for Leaf<'_> {
    fn from(n: u64) -> Self {
        Leaf::Number(n.into())
    }
}

impl From<i32> for Leaf<'_> {
    fn from(n: i32) -> Self {
        Leaf::Number(n.into())
    }
}

/// A list's node type: the plain fields it can answer from what it holds.
pub trait PlainNode {
    /// The value of the plain field `name` (a field without arguments or sub-selection) when
    /// the node holds what it takes; `None` leaves the node to its ordinary resolver. No field
    /// is plain unless the node says so.
    fn plain(&self, _name: &str) -> Option<Leaf<'_>> {
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

/// A list's node, resolved directly when its selection allows.
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
        let value = NodePlan::of(&ctx.item.node).and_then(|plan| plan.value(self.0));
        match value {
            Some(object) => Ok(object),
            None => self.0.resolve(ctx, field).await,
        }
    }
}

/// A page's edges, written in one pass when each edge's selection is `cursor` and a `node`
/// whose selection is plain; otherwise resolved as an ordinary list. With a [`Written`] in the
/// request's data, the page is written as JSON into it.
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
        if let Some(plan) = EdgePlan::of(&ctx.item.node) {
            let answer = match ctx.data_opt::<Arc<Written>>() {
                Some(written) => plan.json(self.0).map(|json| written.put(json)),
                None => plan.value(self.0),
            };
            if let Some(answer) = answer {
                return Ok(answer);
            }
        }
        self.0.resolve(ctx, field).await
    }
}

/// The items of a selection when each is a field without arguments or directives, under a
/// response key of its own: `(key, field)`.
fn fields(selection: &SelectionSet) -> Option<Vec<(&Name, &Field)>> {
    let mut fields: Vec<(&Name, &Field)> = Vec::with_capacity(selection.items.len());
    for item in &selection.items {
        let Selection::Field(field) = &item.node else {
            return None;
        };
        let field = &field.node;
        let key = &field.response_key().node;
        // A key asked twice is merged by the ordinary resolver.
        if !field.arguments.is_empty()
            || !field.directives.is_empty()
            || fields.iter().any(|(k, _)| *k == key)
        {
            return None;
        }
        fields.push((key, field));
    }
    Some(fields)
}

/// What a node's selection asks when it is plain: each response key with its field's name.
struct NodePlan<'s>(Vec<(&'s Name, &'s str)>);

impl<'s> NodePlan<'s> {
    /// The plan of `selection`; `None` when a field has a sub-selection or the selection is
    /// not plain.
    fn of(selection: &'s SelectionSet) -> Option<Self> {
        fields(selection)?
            .into_iter()
            .map(|(key, f)| {
                f.selection_set
                    .node
                    .items
                    .is_empty()
                    .then_some((key, f.name.node.as_str()))
            })
            .collect::<Option<Vec<_>>>()
            .map(NodePlan)
    }

    fn leaf<'n, N: OutputType + PlainNode>(node: &'n N, name: &str) -> Option<Leaf<'n>> {
        match name {
            "__typename" => Some(Leaf::Text(N::type_name())),
            _ => node.plain(name),
        }
    }

    fn value<N: OutputType + PlainNode>(&self, node: &N) -> Option<Value> {
        let mut object = IndexMap::with_capacity(self.0.len());
        for &(key, name) in &self.0 {
            object.insert(key.clone(), Self::leaf(node, name)?.into_value());
        }
        Some(Value::Object(object))
    }

    fn write<N: OutputType + PlainNode>(&self, node: &N, out: &mut String) -> Option<()> {
        out.push('{');
        for (i, &(key, name)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_text(out, key);
            out.push(':');
            Self::leaf(node, name)?.write(out);
        }
        out.push('}');
        Some(())
    }
}

/// What an edge's selection asks of it.
enum EdgeItem<'s> {
    Typename,
    Cursor,
    Node(NodePlan<'s>),
}

/// What each edge's selection asks when it is plain: each response key with its item.
struct EdgePlan<'s>(Vec<(&'s Name, EdgeItem<'s>)>);

impl<'s> EdgePlan<'s> {
    fn of(selection: &'s SelectionSet) -> Option<Self> {
        fields(selection)?
            .into_iter()
            .map(|(key, f)| {
                let sub = &f.selection_set.node;
                let item = match f.name.node.as_str() {
                    "__typename" => EdgeItem::Typename,
                    "cursor" if sub.items.is_empty() => EdgeItem::Cursor,
                    "node" => EdgeItem::Node(NodePlan::of(sub)?),
                    _ => return None,
                };
                Some((key, item))
            })
            .collect::<Option<Vec<_>>>()
            .map(EdgePlan)
    }

    fn value<E: OutputType + PlainEdge>(&self, edges: &[E]) -> Option<Value> {
        let edge = |e: &E| {
            let mut object = IndexMap::with_capacity(self.0.len());
            for (key, item) in &self.0 {
                let value = match item {
                    EdgeItem::Typename => Value::String(E::type_name().into_owned()),
                    EdgeItem::Cursor => Value::String(e.cursor_text()),
                    EdgeItem::Node(plan) => plan.value(e.record())?,
                };
                object.insert((*key).clone(), value);
            }
            Some(Value::Object(object))
        };
        edges
            .iter()
            .map(edge)
            .collect::<Option<_>>()
            .map(Value::List)
    }

    /// The page as one JSON array.
    fn json<E: OutputType + PlainEdge>(&self, edges: &[E]) -> Option<String> {
        let mut out = String::with_capacity(64 + edges.len() * 1024);
        out.push('[');
        for (i, e) in edges.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('{');
            for (j, (key, item)) in self.0.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                push_text(&mut out, key);
                out.push(':');
                match item {
                    EdgeItem::Typename => push_text(&mut out, &E::type_name()),
                    EdgeItem::Cursor => push_text(&mut out, &e.cursor_text()),
                    EdgeItem::Node(plan) => plan.write(e.record(), &mut out)?,
                }
            }
            out.push('}');
        }
        out.push(']');
        Some(out)
    }
}

/// `Some(v)` as a nullable GraphQL value.
pub fn nullable<'a, T>(v: Option<T>, f: impl FnOnce(T) -> Leaf<'a>) -> Leaf<'a> {
    v.map_or(Leaf::Null, f)
}

/// A string value.
pub fn text<'a>(s: impl Into<Cow<'a, str>>) -> Leaf<'a> {
    Leaf::Text(s.into())
}
