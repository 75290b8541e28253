//! The small component schemas of the OpenAPI document that the parameters and records use:
//! an address, the chain list, the token-id format, the order. The query parameters
//! themselves are written from each route's table in [`crate::rest::spec`]; the document
//! ([`crate::rest::openapi`]) lists the handlers.

use std::borrow::Cow;

use utoipa::openapi::schema::{Object, ObjectBuilder, SchemaType, Type};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use crate::types::Chain;

/// An EVM address as a request may write it (`address` component).
pub struct AddressSchema;

impl PartialSchema for AddressSchema {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^0[xX][0-9a-fA-F]{40}$"))
            .description(Some(
                "An EVM address: `0x` followed by 40 hex digits, in any letter case (a \
                 mixed-case address need not be a valid EIP-55 checksum). Answers write \
                 addresses lowercase.",
            ))
            .examples([serde_json::json!(crate::demo::EXAMPLE_NFT_WALLET)])
            .into()
    }
}

impl ToSchema for AddressSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("address")
    }
}

/// The `chain` parameter (`chainList` component), built from the chain table.
pub struct ChainList;

impl PartialSchema for ChainList {
    fn schema() -> RefOr<Schema> {
        let values: Vec<String> = Chain::all()
            .flat_map(|c| [c.name().to_string(), c.hex_id()])
            .collect();
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(values))
            .default(Some(serde_json::json!(Chain::ETH.name())))
            .description(Some(
                "A supported chain, by name or by `0x` hex chain id (hex ids are accepted in \
                 any letter case).",
            ))
            .examples([serde_json::json!(Chain::ETH.name())])
            .into()
    }
}

impl ToSchema for ChainList {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("chainList")
    }
}

/// The value of a metadata attribute: any JSON value, as the metadata gives it.
pub fn attribute_value() -> Object {
    ObjectBuilder::new()
        .description(Some(
            "Its value, as the metadata gives it: usually text or a number, but any JSON value \
             is passed through.",
        ))
        .schema_type(SchemaType::from_iter([
            Type::String,
            Type::Number,
            Type::Boolean,
            Type::Object,
            Type::Array,
            Type::Null,
        ]))
        .build()
}

/// The `format` parameter (`tokenIdFormat` component): how token ids are written.
pub struct TokenIdFormatSchema;

impl PartialSchema for TokenIdFormatSchema {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["decimal", "hex"]))
            .default(Some(serde_json::json!("decimal")))
            .description(Some(
                "How token ids are written: `decimal` digits, or `hex` (`0x` and lowercase hex \
                 digits).",
            ))
            .into()
    }
}

impl ToSchema for TokenIdFormatSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("tokenIdFormat")
    }
}

/// The `order` of a list, as v2.2 names it (`orderList`).
pub struct OrderList;

impl PartialSchema for OrderList {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["ASC", "DESC"]))
            .default(Some(serde_json::json!("DESC")))
            .description(Some(
                "`DESC` (the default): newest first; `ASC`: oldest first. Any letter case.",
            ))
            .into()
    }
}

impl ToSchema for OrderList {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("orderList")
    }
}
