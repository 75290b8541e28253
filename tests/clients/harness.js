// Drives a real, unmodified `moralis` npm package against a server and prints what it got.
//
// Used by tests/clients/moralis-*/run.js (each passes the `moralis` of its own node_modules) and
// driven by tests/api/sdk_clients/. Usage:
//
//   node tests/clients/moralis-2.27/run.js BASE_URL < input.json
//
// BASE_URL is handed to the SDK as `evmApiBaseUrl` (e.g. http://127.0.0.1:PORT/api/v2).
// input.json: {"apiKey": "...", "calls": [{"name": "...", "op": "nft.getWalletNFTs",
// "params": {...}}]}. `op` is `group.method` of `Moralis.EvmApi`; `params` goes to it as it is.
// Each call is paged with `response.next()` while `response.hasNext()` (a call whose response
// is not paged, such as getWalletTokenBalances, is one page).
//
// The SDK is started with `Moralis.start({ apiKey, evmApiBaseUrl })` and nothing else; the only
// other thing this script does is watch the HTTP requests it sends, passively, through Node's
// `http.client.request.start` diagnostics channel. Output, on stdout, one JSON document:
//
//   {"sdk": {"moralis": "2.27.2", "@moralisweb3/evm-api": "..."},
//    "calls": [{"name", "op", "params",
//               "pages": [{"raw": <response.toJSON()>, "result": [<record.toJSON()>] | <object>,
//                          "hasNext"}],
//               "requests": [{"method", "path", "headers"}],
//               "error": null | {"name", "code", "message", "status", "body"}}]}
//
// `raw` is the JSON body the SDK received (`response.toJSON()`, the same as `response.raw`, a
// getter in the v2 adapters and a method in the v3 one); `result` is what its typed records make of it
// (reading `response.result` runs the SDK's own validation, which rejects a malformed page).
// The API key is written as "<api key>" in the recorded headers. Anything the SDK logs goes to
// stderr, so stdout stays one JSON document. Exit status: 0 when the input could be run (an
// SDK error is reported in its call), 2 on bad usage.
'use strict';

const diagnostics = require('node:diagnostics_channel');

/** At most this many pages per call: a loop guard. */
const MAX_PAGES = 500;

function readStdin() {
  return new Promise((resolve, reject) => {
    let data = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk) => (data += chunk));
    process.stdin.on('end', () => resolve(data));
    process.stdin.on('error', reject);
  });
}

/** JSON.stringify that survives BigInt and writes `undefined` as null. */
function toJson(value) {
  return JSON.stringify(value, (_k, v) => {
    if (typeof v === 'bigint') return v.toString();
    return v === undefined ? null : v;
  });
}

/** A plain-JSON copy of `value` (so BigInt, Dates and class instances print as JSON would). */
function plain(value) {
  return JSON.parse(toJson(value === undefined ? null : value));
}

function describeError(e) {
  const details = (e && e.details) || {};
  const response = details.response || {};
  return {
    name: e && e.name,
    code: e && e.code,
    message: e && e.message,
    status: details.status === undefined ? null : details.status,
    body: response.data === undefined ? null : plain(response.data),
  };
}

/** Request headers with the API key replaced wherever it appears in a value. */
function redactHeaders(headers, apiKey) {
  const out = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = String(value).split(apiKey).join('<api key>');
  }
  return out;
}

async function main(Moralis, packages) {
  const baseUrl = process.argv[2];
  if (!baseUrl) {
    process.stderr.write('usage: node run.js BASE_URL < {"apiKey": ..., "calls": [...]}\n');
    process.exit(2);
  }
  const input = JSON.parse(await readStdin());
  const apiKey = input.apiKey;
  if (typeof apiKey !== 'string' || !Array.isArray(input.calls)) {
    process.stderr.write('stdin must be {"apiKey": "...", "calls": [...]}\n');
    process.exit(2);
  }

  // Whatever the SDK logs must not corrupt the JSON on stdout.
  const stdout = process.stdout;
  console.log = console.info = console.debug = console.warn = console.error;

  let requests = [];
  diagnostics.subscribe('http.client.request.start', ({ request }) => {
    const headers = redactHeaders(request.getHeaders(), apiKey);
    requests.push({ method: request.method, path: request.path, headers });
  });

  await Moralis.start({ apiKey, evmApiBaseUrl: baseUrl });

  const calls = [];
  for (const call of input.calls) {
    const [group, method] = String(call.op).split('.');
    const out = { name: call.name, op: call.op, params: call.params, pages: [], requests: [], error: null };
    requests = [];
    try {
      const api = Moralis.EvmApi[group];
      if (!api || typeof api[method] !== 'function') {
        throw new Error(`Moralis.EvmApi.${call.op} does not exist in this SDK`);
      }
      let response = await api[method](call.params);
      // A nullable operation (getNFTContractMetadata) answers `null` for the server's 404.
      if (response === null) out.pages.push({ raw: null, result: null, hasNext: false });
      while (response !== null) {
        // A call that is not paged (getWalletTokenBalances: a bare array) has no hasNext().
        const paged = typeof response.hasNext === 'function';
        const page = { raw: plain(response.toJSON()), result: null, hasNext: paged && response.hasNext() };
        out.pages.push(page);
        // A call answering one object (getDateToBlock, web3ApiVersion) has it as `result`.
        const result = response.result;
        const typed = (r) => plain(r && typeof r.toJSON === 'function' ? r.toJSON() : r);
        page.result = Array.isArray(result) ? result.map(typed) : typed(result);
        if (!page.hasNext) break;
        if (out.pages.length >= MAX_PAGES) throw new Error(`more than ${MAX_PAGES} pages`);
        response = await response.next();
      }
    } catch (e) {
      out.error = describeError(e);
    }
    out.requests = requests;
    calls.push(out);
  }

  // Resolves once the whole document is handed to the OS: stdout is asynchronous on a pipe, and
  // exiting earlier would cut it short.
  await new Promise((resolve, reject) =>
    stdout.write(toJson({ sdk: packages, calls }) + '\n', (e) => (e ? reject(e) : resolve())),
  );
}

/** Runs `main`, reporting a crash on stderr with exit status 1. */
function run(Moralis, packages) {
  main(Moralis, packages).then(
    () => process.exit(0),
    (e) => {
      process.stderr.write(`harness failed: ${(e && e.stack) || e}\n`);
      process.exit(1);
    },
  );
}

module.exports = { run };
