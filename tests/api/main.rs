//! The API suites, in one binary: in-process (`schema.execute`, `router.oneshot`) and black-box
//! (a server on port 0 over real HTTP, a fresh database per test), on SQLite, PostgreSQL and
//! MySQL; the architecture check, the generated contracts (schema, OpenAPI), the CLI, the SDK
//! clients and the playground in a browser. Test names are `suite::[backend::]name`.

#[path = "../support/mod.rs"]
mod support;

mod architecture;
mod binary_migration;
mod blackbox_demo;
mod blackbox_errors;
mod blackbox_pagination;
mod blackbox_typed_columns;
mod blackbox_uint256;
mod change_feed;
mod cli;
mod erc20_holders;
mod graphql_api;
mod graphql_graph;
mod graphql_http;
mod graphql_schema;
mod graphql_statements;
mod import_counts;
mod lists;
mod moralis_lookups;
mod openapi_doc;
mod pair_lookups;
mod playground_browser;
mod point_in_time;
mod rest_inprocess;
mod sdk_clients;
mod streams_routes;
