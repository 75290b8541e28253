//! The direct path for a list's nodes. A node's fields are answered from its page's finished
//! answer, in memory; resolving each of them as its own future (async-graphql's way: one boxed
//! future, one context and one map insertion per field, for every node of the page) costs more
//! server CPU than the answer itself. When a node's selection holds only plain fields (no
//! arguments, directives, fragments or sub-selections) and the node can answer every one of them
//! from what it holds ([`Listed::plain`]), [`Plain`] writes the node's object in one pass;
//! anything else goes to the node's ordinary resolver, unchanged. Both paths give the same
//! values (`tests/api/graphql_api.rs` asks the same pages both ways); `@skip` and `@include`
//! are applied by async-graphql before a selection reaches either.

use std::borrow::Cow;

use async_graphql::indexmap::IndexMap;
use async_graphql::parser::types::{Field, Selection};
use async_graphql::registry::Registry;
use async_graphql::{ContextSelectionSet, OutputType, Positioned, ServerResult, Value};

use super::connection::Listed;

/// A list's node, resolved directly when its selection allows ([`plain_object`]).
pub struct Plain<'a, N>(pub &'a N);

impl<N: OutputType + Listed> OutputType for Plain<'_, N> {
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
        match plain_object(self.0, ctx) {
            Some(object) => Ok(object),
            None => self.0.resolve(ctx, field).await,
        }
    }
}

/// The node's object when every selected item is a plain field it can answer; `None` otherwise.
fn plain_object<N: OutputType + Listed>(node: &N, ctx: &ContextSelectionSet<'_>) -> Option<Value> {
    let items = &ctx.item.node.items;
    let mut object = IndexMap::with_capacity(items.len());
    for item in items {
        let Selection::Field(field) = &item.node else {
            return None;
        };
        let field = &field.node;
        let plain = field.arguments.is_empty()
            && field.directives.is_empty()
            && field.selection_set.node.items.is_empty();
        if !plain {
            return None;
        }
        let name = field.name.node.as_str();
        let value = match name {
            "__typename" => Value::String(N::type_name().into_owned()),
            _ => node.plain(name)?,
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

/// `Some(v)` as a nullable GraphQL value.
pub fn nullable<T>(v: Option<T>, f: impl FnOnce(T) -> Value) -> Value {
    v.map_or(Value::Null, f)
}

/// A string value.
pub fn text(s: impl Into<String>) -> Value {
    Value::String(s.into())
}
