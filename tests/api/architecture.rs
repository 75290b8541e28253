//! The architecture, checked: which top-level module of `src/` may import which. The table
//! [`ALLOWED`] is the documentation; the test reads every file of `src/` and fails when a module
//! imports one it may not, when the table itself has a cycle, or when any two modules (files)
//! of `src/` import each other through a chain of imports. Further rules, one test each: tables
//! only through `store/` and `query/`, one dialect switch, cursors read only by the walk, REST
//! query parameters described only in their route's spec (`rest/spec.rs`).
//!
//! Data flows chain → `indexer` → `store` → database → `query` → `rest` / `graphql`; the
//! imports point the other way, down the layers:
//!
//! ```text
//! types, tls ← telemetry, decode, entity ← store ← lists, keys, import, offchain,
//!   query, indexer, demo ← app (state, auth, caller) ← rest, graphql, ops ← server ← startup
//!   ← main
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module of `src/` and the modules it may import (`crate::…`).
const ALLOWED: &[(&str, &[&str])] = &[
    // The vocabulary at the bottom: boundary types, TLS set-up, tracing and metric names.
    ("types", &[]),
    ("tls", &[]),
    ("telemetry", &["types"]),
    ("decode", &["types"]),
    ("entity", &["types"]),
    // The one door to the tables.
    ("store", &["decode", "entity", "types", "telemetry"]),
    // Services over the store (which alone touches the tables).
    ("lists", &["store", "types"]),
    ("keys", &["store", "types"]),
    ("import", &["decode", "lists", "store", "types"]),
    ("offchain", &["store", "tls", "types", "telemetry"]),
    ("query", &["entity", "store", "types"]),
    (
        "indexer",
        &["decode", "lists", "store", "telemetry", "tls", "types"],
    ),
    ("demo", &["import", "lists", "store", "types"]),
    // Webhook streams: their management and the delivery worker, over the change feed.
    (
        "webhooks",
        &["decode", "query", "store", "telemetry", "tls", "types"],
    ),
    // The application below its adapters.
    (
        "app",
        &["keys", "offchain", "query", "store", "telemetry", "types"],
    ),
    // The adapters.
    (
        "rest",
        &["app", "demo", "offchain", "query", "types", "webhooks"],
    ),
    ("graphql", &["app", "query", "telemetry", "types"]),
    ("ops", &["app", "store", "telemetry", "types"]),
    // The one route list.
    ("server", &["app", "graphql", "ops", "rest", "telemetry"]),
    // What each subcommand does; `main.rs` only parses the command line and calls it.
    (
        "startup",
        &[
            "app",
            "demo",
            "import",
            "indexer",
            "keys",
            "lists",
            "offchain",
            "query",
            "server",
            "store",
            "telemetry",
            "types",
            "webhooks",
        ],
    ),
];

/// Files that still read tables through `entity` outside `store/` and `query/`; each should
/// move its statements into `store/`. The list may only shrink: a file fixed must leave it.
const ENTITY_READERS_TO_MOVE: &[&str] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/`, relative to it, with its text stripped of comments.
fn files() -> BTreeMap<String, String> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).expect("under src");
                let text = std::fs::read_to_string(&path).expect("read file");
                out.insert(
                    rel.to_string_lossy().replace('\\', "/"),
                    strip_comments(&text),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&src(), &src(), &mut out);
    out
}

/// The text without `//` comments (doc comments included) and string literals' contents, so
/// that a path mentioned in prose is not an import.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_str = false;
        let mut prev = ' ';
        let mut kept = String::new();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if !in_str && c == '/' && chars.get(i + 1) == Some(&'/') {
                break;
            }
            if c == '"' && prev != '\\' {
                in_str = !in_str;
            } else if !in_str {
                kept.push(c);
            }
            prev = c;
            i += 1;
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// The module path of a file: `rest/nft.rs` → `[rest, nft]`, `rest/mod.rs` → `[rest]`.
fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts
}

/// Every path a file imports, as module paths from the crate root: `crate::a::b::C`,
/// `super::x`, and each item of a `{…}` group (nested groups included).
fn imports(module: &[String], text: &str) -> Vec<Vec<String>> {
    let bytes: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest: String = bytes[i..bytes.len().min(i + 7)].iter().collect();
        let boundary = i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_');
        if boundary && (rest.starts_with("crate::") || rest.starts_with("super::")) {
            let base: Vec<String> = if rest.starts_with("crate::") {
                Vec::new()
            } else {
                // `super` of `a/b.rs` is `a`; of `a/b/mod.rs` (module a::b) also `a`.
                module[..module.len().saturating_sub(1)].to_vec()
            };
            let (paths, end) = parse_path(&bytes, i + 7, base);
            out.extend(paths);
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// Parses `a::b::{c, d::e}` from `at`, prefixed by `base`; returns the paths and where it ended.
fn parse_path(s: &[char], mut at: usize, mut base: Vec<String>) -> (Vec<Vec<String>>, usize) {
    loop {
        if s.get(at) == Some(&'{') {
            let mut out = Vec::new();
            at += 1;
            loop {
                while s.get(at).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    at += 1;
                }
                match s.get(at) {
                    None => return (out, at),
                    Some('}') => return (out, at + 1),
                    _ => {
                        let (paths, end) = parse_path(s, at, base.clone());
                        out.extend(paths);
                        if end == at {
                            at += 1;
                        } else {
                            at = end;
                        }
                    }
                }
            }
        }
        let start = at;
        while s.get(at).is_some_and(|c| c.is_alphanumeric() || *c == '_') {
            at += 1;
        }
        let ident: String = s[start..at].iter().collect();
        if ident.is_empty() {
            return (vec![base], at);
        }
        match ident.as_str() {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => base.push(ident),
        }
        if s.get(at) == Some(&':') && s.get(at + 1) == Some(&':') {
            at += 2;
        } else {
            return (vec![base], at);
        }
    }
}

/// The longest prefix of `path` that is a module of the crate.
fn resolve(path: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
}

/// Module → the modules it imports (not its own ancestors or descendants).
fn module_graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files = files();
    let modules: BTreeSet<Vec<String>> = files.keys().map(|f| module_of(f)).collect();
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (file, text) in &files {
        if file == "main.rs" {
            continue;
        }
        let me = module_of(file);
        let entry = graph.entry(me.clone()).or_default();
        for path in imports(&me, text) {
            if let Some(target) = resolve(&path, &modules) {
                let related = target.starts_with(&me) || me.starts_with(&target);
                if !related && !target.is_empty() {
                    entry.insert(target);
                }
            }
        }
    }
    graph
}

#[test]
fn modules_import_only_the_layers_below_them() {
    let allowed: BTreeMap<&str, BTreeSet<&str>> = ALLOWED
        .iter()
        .map(|(m, deps)| (*m, deps.iter().copied().collect()))
        .collect();
    let mut violations = Vec::new();
    let mut seen = BTreeSet::new();
    for (module, targets) in module_graph() {
        let Some(top) = module.first() else { continue };
        seen.insert(top.clone());
        let Some(ok) = allowed.get(top.as_str()) else {
            violations.push(format!("src/{top} is not in the architecture table"));
            continue;
        };
        for t in targets {
            let t_top = &t[0];
            if t_top != top && !ok.contains(t_top.as_str()) {
                violations.push(format!("{} imports {}", module.join("::"), t.join("::")));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports against the layers (tests/api/architecture.rs, ALLOWED):\n{}",
        violations.join("\n")
    );
    assert!(seen.len() >= 15, "the scan found too few modules: {seen:?}");
}

#[test]
fn the_layer_table_has_no_cycle() {
    let graph: BTreeMap<&str, Vec<&str>> = ALLOWED.iter().map(|(m, d)| (*m, d.to_vec())).collect();
    // Repeatedly remove modules that depend on nothing left: what remains is a cycle.
    let mut left: BTreeSet<&str> = graph.keys().copied().collect();
    loop {
        let free: Vec<&str> = left
            .iter()
            .copied()
            .filter(|m| graph[m].iter().all(|d| !left.contains(d)))
            .collect();
        if free.is_empty() {
            break;
        }
        for m in free {
            left.remove(m);
        }
    }
    assert!(
        left.is_empty(),
        "the layer table has a cycle among {left:?}"
    );
}

/// Strongly connected components of more than one module (Tarjan).
fn cycles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on: BTreeSet<&'a Vec<String>>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a Vec<String>) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        if let Some(next) = t.g.get(v) {
            for w in next {
                let Some((w, _)) = t.g.get_key_value(w) else {
                    continue;
                };
                if !t.index.contains_key(w) {
                    visit(t, w);
                    let lw = t.low[w];
                    let lv = t.low[v];
                    t.low.insert(v, lv.min(lw));
                } else if t.on.contains(w) {
                    let iw = t.index[w];
                    let lv = t.low[v];
                    t.low.insert(v, lv.min(iw));
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.join("::"));
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn no_import_cycle_among_the_modules_of_src() {
    let found = cycles(&module_graph());
    assert!(
        found.is_empty(),
        "modules importing each other (through a chain of imports): {found:?}"
    );
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let a = vec!["a".to_string()];
    let b = vec!["b".to_string()];
    let c = vec!["c".to_string()];
    let mut g = BTreeMap::new();
    g.insert(a.clone(), BTreeSet::from([b.clone()]));
    g.insert(b.clone(), BTreeSet::from([c.clone()]));
    g.insert(c.clone(), BTreeSet::from([a.clone()]));
    assert_eq!(cycles(&g), vec![vec!["a", "b", "c"]]);
    g.insert(c, BTreeSet::new());
    assert!(cycles(&g).is_empty());
}

#[test]
fn the_import_parser_reads_groups_and_super() {
    let me = vec!["rest".to_string(), "nft".to_string()];
    let text = "use crate::{query::{Page, QueryService}, types};\nuse super::media::X;\n\
                let x = \"crate::server\"; // crate::graphql";
    let got = imports(&me, &strip_comments(text));
    let got: Vec<String> = got.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        got,
        [
            "query::Page",
            "query::QueryService",
            "types",
            "rest::media::X"
        ]
    );
}

#[test]
fn tables_are_touched_only_by_store_and_query() {
    let mut readers = Vec::new();
    for (file, text) in files() {
        let outside = !(file.starts_with("store/")
            || file.starts_with("query/")
            || file.starts_with("entity/"));
        if outside && text.contains("entity::") {
            readers.push(file);
        }
    }
    let listed: Vec<String> = ENTITY_READERS_TO_MOVE
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        readers, listed,
        "files using `entity::` outside store/ and query/ (new ones must go through store/; \
         a file moved to store/ leaves ENTITY_READERS_TO_MOVE)"
    );
}

#[test]
fn database_dialects_are_decided_in_one_place() {
    let branches: Vec<String> = files()
        .into_iter()
        .filter(|(file, text)| file != "store/dialect.rs" && text.contains("DbBackend"))
        .map(|(file, _)| file)
        .collect();
    assert!(
        branches.is_empty(),
        "`DbBackend` outside store/dialect.rs (ask `Dialect` instead): {branches:?}"
    );
}

#[test]
fn token_standards_are_never_compared_as_strings() {
    let patterns = [
        "== \"ERC",
        "!= \"ERC",
        "Some(\"ERC",
        "eq(\"ERC",
        "\"ERC20\" =>",
    ];
    let patterns: Vec<String> = patterns
        .iter()
        .map(|p| p.to_string())
        .chain(["\"ERC721\" =>", "\"ERC1155\" =>"].map(String::from))
        .collect();
    let mut found = Vec::new();
    for entry in files_raw() {
        let (file, text) = entry;
        if file == "types/standard.rs" {
            continue;
        }
        // Unit tests may spell stored rows out.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for p in &patterns {
            if code.contains(p.as_str()) {
                found.push(format!("{file}: {p}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "token standards compared as strings (use types::TokenStandard): {found:?}"
    );
}

#[test]
fn stored_values_are_never_parsed_back() {
    // Typed columns (entity/values.rs) read addresses, uint256 values and standards as the
    // boundary types: the code that reads the tables never parses stored text itself.
    let patterns = [
        "Address::parse(",
        "Uint256::from_db(",
        "TokenStandard::parse(",
    ];
    let mut found = Vec::new();
    for (file, text) in files_raw() {
        // query/walk.rs parses cursor text (the user's input), not stored text.
        if !(file.starts_with("store/") || file.starts_with("query/")) || file == "query/walk.rs" {
            continue;
        }
        // Unit tests build their inputs from text.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for p in patterns {
            if code.contains(p) {
                found.push(format!("{file}: {p}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "stored text parsed back in store/ or query/ (read a typed column): {found:?}"
    );
}

#[test]
fn only_the_walk_reads_cursors() {
    // A cursor's text becomes a question's typed position in one place (query/walk.rs); the
    // questions read `Walk::position`, never the payload's strings.
    let patterns = ["CursorPayload", ".decode(", ".after"];
    let mut found = Vec::new();
    for (file, text) in files_raw() {
        if !file.starts_with("query/") || file == "query/walk.rs" || file == "query/cursor.rs" {
            continue;
        }
        let code = strip_comments(text.split("#[cfg(test)]").next().unwrap_or_default());
        for p in patterns {
            if code.contains(p) {
                found.push(format!("{file}: {p}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "cursor payloads read outside query/walk.rs (ask Walk::position): {found:?}"
    );
}

/// Every `.rs` file under `src/` with its text as written.
fn files_raw() -> Vec<(String, String)> {
    files()
        .into_keys()
        .map(|f| {
            let text = std::fs::read_to_string(src().join(&f)).expect("read file");
            (f, text)
        })
        .collect()
}

/// What would describe a query parameter to the OpenAPI document: a derived or hand-written
/// `IntoParams`, utoipa's field attributes, a parameter built by hand, or a
/// `("name" = T, Query, …)` entry of a `#[utoipa::path(params(…))]`.
const QUERY_PARAMETER_DESCRIPTIONS: &[&str] = &[
    "IntoParams",
    "#[param(",
    "#[into_params(",
    "ParameterBuilder",
    "ParameterIn::Query",
];

/// The places in `text` (one file's source, comments skipped) that describe a query parameter.
fn query_parameter_descriptions(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut found = Vec::new();
    for line in code.lines().map(str::trim) {
        if line.starts_with("//") {
            continue;
        }
        if let Some(p) = QUERY_PARAMETER_DESCRIPTIONS
            .iter()
            .find(|p| line.contains(*p))
        {
            found.push((*p).to_string());
        }
        let tuple_in_query = line.starts_with("(\"")
            && line.contains("\" =")
            && (line.contains(", Query") || line.contains("= Query"));
        if tuple_in_query {
            found.push(line.to_string());
        }
    }
    found
}

#[test]
fn rest_parameters_are_described_only_in_their_spec() {
    // One table per route in rest/spec.rs is read by the parser and written into the OpenAPI
    // document; nothing else may describe a query parameter, or the two drift apart.
    let mut found = Vec::new();
    for (file, text) in files_raw() {
        if file == "rest/spec.rs" || file.starts_with("rest/spec/") {
            continue;
        }
        for place in query_parameter_descriptions(&text) {
            found.push(format!("{file}: {place}"));
        }
    }
    assert!(
        found.is_empty(),
        "query parameters described outside rest/spec.rs (add them to the route's table): \
         {found:?}"
    );
}

#[test]
fn the_spec_check_finds_a_description() {
    let derived = "#[derive(IntoParams)]\nstruct Q { #[param(required = false)] chain: String }";
    assert_eq!(
        query_parameter_descriptions(derived),
        ["IntoParams", "#[param("]
    );
    let tuple = "params(\n    (\"chain\" = String, Query, description = \"x\"),\n)";
    assert_eq!(query_parameter_descriptions(tuple).len(), 1);
    let path = "params(\n    (\"address\" = AddressSchema, Path, description = \"x\"),\n)";
    assert!(query_parameter_descriptions(path).is_empty());
    assert!(query_parameter_descriptions("// IntoParams in prose").is_empty());
}

#[test]
fn transfer_arguments_are_declared_once() {
    // The transfer list fields of every object take their arguments from one declaration
    // (graphql/objects/transfer_fields.rs); a resolver elsewhere that declares the date bounds
    // is a second copy of them, which drifts.
    let mut found = Vec::new();
    for (file, text) in files_raw() {
        if !file.starts_with("graphql/") || file == "graphql/objects/transfer_fields.rs" {
            continue;
        }
        let code = strip_comments(text.split("#[cfg(test)]").next().unwrap_or_default());
        let declares = |line: &str| {
            let line = line.trim();
            !line.starts_with("pub ")
                && (line.contains("from_date: Option<") || line.contains("to_date: Option<"))
        };
        if code.lines().any(declares) {
            found.push(file);
        }
    }
    assert!(
        found.is_empty(),
        "transfer arguments declared outside graphql/objects/transfer_fields.rs (add the field \
         to its transfer_fields! list): {found:?}"
    );
}
