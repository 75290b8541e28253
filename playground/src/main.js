// The playground page's code: GraphiQL with tokenql's API-key box and example tabs.
//
// Bundled by build.mjs (with React, GraphiQL and its CSS) into dist/; index.html holds the
// key box and the example queries. Nothing here loads anything from another host.

import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { Kind, parse } from 'graphql';
import { createClient } from 'graphql-ws';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';

import 'graphiql/style.css';

const KEY_STORAGE = 'tokenql.apiKey';
const NO_KEY =
  'No API key: put yours in the X-API-Key box at the top of the page ' +
  '(create one with: tokenql keys create --name NAME).';

const container = document.getElementById('graphiql');
const input = document.getElementById('api-key');

function storedKey() {
  try {
    return window.localStorage.getItem(KEY_STORAGE) || '';
  } catch {
    return ''; // storage disabled
  }
}

function storeKey(key) {
  try {
    window.localStorage.setItem(KEY_STORAGE, key);
  } catch {
    // storage disabled: the key lasts as long as the page
  }
}

// The example tabs: each <script type="application/graphql" class="example-query"> in
// index.html, with the <script type="application/json" class="example-variables"> after it.
function exampleTabs() {
  const queries = document.querySelectorAll('script.example-query');
  const variables = document.querySelectorAll('script.example-variables');
  return Array.from(queries, (q, i) => ({
    query: q.textContent.replace(/^\n/, ''),
    variables: variables[i] ? variables[i].textContent.trim() : undefined,
  }));
}

const endpoint = new URL('/graphql', window.location.href).toString();
// Subscriptions go over a WebSocket to the same endpoint (graphql-transport-ws), the key in
// connection_init's payload (a browser cannot set headers on a WebSocket).
const wsEndpoint = endpoint.replace(/^http/, 'ws');

// The operation `params` runs: the one named, or the only one.
function operationOf(params) {
  let operations;
  try {
    operations = parse(params.query).definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  } catch {
    return undefined; // the server explains the syntax error
  }
  if (params.operationName) {
    return operations.find((o) => o.name && o.name.value === params.operationName);
  }
  return operations.length === 1 ? operations[0] : undefined;
}

// The fetcher for `key`: queries over HTTP, subscriptions over a WebSocket opened on first use
// (its changes arrive as an async iterable, which GraphiQL shows as they come).
function baseFetcher(key) {
  const http = createGraphiQLFetcher({ url: endpoint, enableIncrementalDelivery: false });
  let ws;
  return (params, opts) => {
    if (operationOf(params)?.operation !== 'subscription') return http(params, opts);
    ws ??= createClient({ url: wsEndpoint, lazy: true, connectionParams: { 'X-API-Key': key } });
    return ws.iterate(params);
  };
}

// GraphiQL 4 may send the operation name of the tab shown before (switch tabs, run: "Unknown
// operation named ...", graphql/graphiql#3632). When the document has no operation of that
// name but only one operation, that one is meant.
function withOperationName(params) {
  if (!params.operationName) return params;
  let operations;
  try {
    operations = parse(params.query).definitions.filter(
      (d) => d.kind === Kind.OPERATION_DEFINITION,
    );
  } catch {
    return params; // the server explains the syntax error
  }
  if (operations.some((o) => o.name && o.name.value === params.operationName)) return params;
  if (operations.length !== 1) return params;
  const only = operations[0].name;
  return { ...params, operationName: only ? only.value : null };
}

// Adds the key from the box unless the Headers tab already sets one; with no key at all it
// answers with an error itself instead of sending a request bound to fail.
function makeFetcher(key) {
  const base = baseFetcher(key);
  return (params, opts) => {
    const headers = { ...(opts && opts.headers) };
    const hasKey = Object.keys(headers).some((h) => h.toLowerCase() === 'x-api-key');
    if (!hasKey) {
      if (!key) return Promise.resolve({ errors: [{ message: NO_KEY }] });
      headers['X-API-Key'] = key;
    }
    return base(withOperationName(params), { ...opts, headers });
  };
}

const tabs = exampleTabs();

// On a first visit GraphiQL 4 fills the editors from `defaultTabs[0]`'s query but not from its
// variables (they come from its own storage only), so the first example would run without
// them. Seeding that storage with the first tab, before GraphiQL starts, fixes both.
try {
  const storage = window.localStorage;
  if (tabs.length && storage.getItem('graphiql:tabState') === null) {
    storage.setItem('graphiql:query', tabs[0].query);
    storage.setItem('graphiql:variables', tabs[0].variables ?? '');
  }
} catch {
  // storage disabled: GraphiQL keeps nothing either
}

const root = createRoot(container);

function render() {
  // A new fetcher makes GraphiQL fetch the schema (and so the docs) again with the new key.
  root.render(
    createElement(GraphiQL, {
      fetcher: makeFetcher(input.value.trim()),
      defaultEditorToolsVisibility: true,
      shouldPersistHeaders: true,
      defaultTabs: tabs,
    }),
  );
}

// A link may carry a key in its fragment (`/playground#key=tq_…`, as `tokenql serve --demo`
// prints it): the fragment never reaches the server or its logs. The key is kept like a typed
// one, and the fragment is removed from the address bar (and so from the history).
function keyFromLink() {
  const hash = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const key = (hash.get('key') || '').trim();
  if (!key) return '';
  hash.delete('key');
  const rest = hash.toString();
  const url = window.location.pathname + window.location.search + (rest ? `#${rest}` : '');
  try {
    window.history.replaceState(null, '', url);
  } catch {
    // an old browser keeps the fragment; the key still works
  }
  storeKey(key);
  return key;
}

input.value = keyFromLink() || storedKey();
let timer;
input.addEventListener('input', () => {
  storeKey(input.value.trim());
  window.clearTimeout(timer);
  timer = window.setTimeout(render, 300);
});
render();
