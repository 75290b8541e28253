// Opens tokenql's GraphiQL playground in headless Chromium and uses it as a person would:
// types the API key, checks the docs explorer (fed by introspection), runs every preloaded
// example query (the flat questions and the walks of the graph) and waits for its data in the
// result pane (the subscription tab: the live changes the test's server writes meanwhile,
// over a WebSocket), then saves a screenshot; last,
// opens the link with the key in its fragment (as `serve --demo` prints it) in a fresh profile.
//
//   node playground.mjs BASE_URL API_KEY SCREENSHOT.png
//
// Every request the page makes is recorded. The run fails on a failed request, an HTTP error
// status, a request to any host but BASE_URL's (such requests are also blocked), a JavaScript
// error or a console error. Chromium is the system's (/usr/bin/chromium, or $CHROMIUM); this
// package only holds playwright-core, which downloads no browser.
//
// Exit status: 0 when everything worked; 1 with the reason on stderr otherwise (a screenshot
// of the failure is saved next to SCREENSHOT, as *-failure.png).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

import { chromium } from 'playwright-core';

const [baseArg, apiKey, screenshot] = process.argv.slice(2);
if (!baseArg || !apiKey || !screenshot) {
  console.error('usage: node playground.mjs BASE_URL API_KEY SCREENSHOT.png');
  process.exit(2);
}
const base = new URL(baseArg);
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const STEP_MS = 60_000;

const log = (msg) => console.error(`playground.mjs: ${msg}`);
const problems = [];
const requests = [];

// The first problem also ends the step under way (see `guard`) instead of letting it time out.
let failStep;
const problemSeen = new Promise((_, reject) => {
  failStep = reject;
});
problemSeen.catch(() => {});
function problem(msg) {
  problems.push(msg);
  failStep(new Error(msg));
}
const guard = (step) => Promise.race([step, problemSeen]);

// True for the tokenql server itself and for URLs that never touch the network.
function isLocal(url) {
  const u = new URL(url);
  if (u.protocol === 'data:' || u.protocol === 'blob:' || u.protocol === 'about:') return true;
  return u.host === base.host && u.protocol === base.protocol;
}

// Resolves when `locator`'s text contains every one of `needles`.
async function waitForText(page, selector, needles, what) {
  const locator = page.locator(selector).first();
  const deadline = Date.now() + STEP_MS;
  let text = '';
  while (Date.now() < deadline) {
    text = (await locator.innerText().catch(() => '')) || '';
    if (needles.every((n) => text.includes(n))) return text;
    if (problems.length) break;
    await page.waitForTimeout(200);
  }
  throw new Error(`${what}: ${selector} never showed ${needles.join(', ')}; it shows:\n${text.slice(0, 1500)}`);
}

// The example tabs of playground/index.html, in order: the operation each runs, the path to
// a list its answer must have records in, and text the result pane must show (near the top:
// the pane draws only the lines in view, and the fields of an object come in the order they
// resolve, so the graph's tabs look for what each of their lists shows).
const EXAMPLES = [
  ['NftsByWallet', ['nftsByWallet'], ['"edges"', '"tokenAddress"']],
  ['Erc20Transfers', ['erc20Transfers'], ['"transactionHash"', '"USDT"']],
  ['WalletGraph', ['wallet', 'nftCollections'], ['"SYNCED"', '"node"']],
  ['TokenTransfers', ['token', 'transfers'], ['"Tether USD"', '"valueDecimal"']],
  ['NftGraph', ['nftCollection', 'nfts'], ['"SYNCED"', '"node"']],
  ['LiveTransfers', null, ['"ADDED"', '"position"']],
];

// Runs the active tab's subscription: a WebSocket to /graphql carrying the key in
// connection_init, and the changes the test's server writes meanwhile in the result pane.
async function runSubscriptionTab(page, operationName, needles) {
  // Frames are recorded from the socket's first moment: connection_init goes out at once.
  const sockets = [];
  const sent = [];
  page.on('websocket', (ws) => {
    sockets.push(ws.url());
    ws.on('framesent', (f) => sent.push(String(f.payload)));
  });
  await page.locator('.graphiql-execute-button').click();
  await waitForText(page, '.graphiql-response', needles, `${operationName} result`);
  const wsUrl = new URL('/graphql', base).toString().replace(/^http/, 'ws');
  if (!sockets.includes(wsUrl)) {
    throw new Error(`${operationName}: no WebSocket to ${wsUrl} (saw ${JSON.stringify(sockets)})`);
  }
  const init = sent.find((p) => p.includes('connection_init'));
  if (!init || !init.includes(apiKey)) {
    throw new Error(`${operationName}: connection_init without the key: ${JSON.stringify(sent)}`);
  }
  // Stop it (the execute button stops a running subscription).
  await page.locator('.graphiql-execute-button').click();
  log(`${operationName}: live changes over a WebSocket, shown in the result pane`);
}

// Runs the query of the active tab and checks both the HTTP answer and the result pane.
async function runActiveTab(page, operationName, path, needles) {
  const answer = page.waitForResponse(
    (r) =>
      r.url() === new URL('/graphql', base).toString() &&
      r.request().method() === 'POST' &&
      String((r.request().postDataJSON() || {}).query).includes(`query ${operationName}(`),
    { timeout: STEP_MS },
  );
  answer.catch(() => {}); // awaited below; no unhandled rejection if the click fails first
  await page.locator('.graphiql-execute-button').click();
  const resp = await guard(answer);
  const body = await resp.json();
  if (resp.status() !== 200 || body.errors) {
    throw new Error(`${operationName}: HTTP ${resp.status()}: ${JSON.stringify(body).slice(0, 800)}`);
  }
  const list = [].concat(path).reduce((v, k) => v?.[k], body.data);
  const edges = list?.edges ?? [];
  if (edges.length === 0) throw new Error(`${operationName}: no edges in ${JSON.stringify(body)}`);
  await waitForText(page, '.graphiql-response', needles, `${operationName} result`);
  log(`${operationName}: ${edges.length} edges, shown in the result pane`);
  return edges.length;
}

// Runs `action` and checks the schema introspection it causes: sent with the key, answered.
async function checkIntrospection(page, action, what) {
  const introspection = page.waitForResponse(
    (r) =>
      r.request().method() === 'POST' &&
      (r.request().postDataJSON() || {}).operationName === 'IntrospectionQuery',
    { timeout: STEP_MS },
  );
  introspection.catch(() => {}); // awaited below
  await guard(action());
  const resp = await guard(introspection);
  const sentKey = await resp.request().headerValue('x-api-key');
  if (sentKey !== apiKey) throw new Error(`${what}: introspection sent X-API-Key ${JSON.stringify(sentKey)}`);
  const schema = await resp.json();
  if (resp.status() !== 200 || !schema.data?.__schema) {
    throw new Error(`${what}: introspection: HTTP ${resp.status()}: ${JSON.stringify(schema).slice(0, 800)}`);
  }
}

// Opens the docs explorer and follows the link to the Query type.
async function openDocs(page) {
  await page.locator('button[aria-label="Show Documentation Explorer"]').click();
  await waitForText(page, '.graphiql-doc-explorer', ['Query'], 'docs explorer');
  await page.locator('.graphiql-doc-explorer a', { hasText: /^Query$/ }).first().click();
  const roots = ['nftsByWallet', 'erc20Transfers', 'wallet', 'token', 'nftCollection', 'nft'];
  await waitForText(page, '.graphiql-doc-explorer', roots, 'docs of Query');
  log(`the docs explorer lists ${roots.join(', ')}`);
}

let browser;
let page;
let ok = false;
try {
  browser = await chromium.launch({
    executablePath,
    headless: true,
    chromiumSandbox: false,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    // Playwright gives the browser a fresh, empty profile (--user-data-dir) of its own.
  });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });

  // Nothing may leave the machine: requests to other hosts are recorded and blocked.
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (isLocal(url)) return route.continue();
    problem(`request to another host: ${url}`);
    return route.abort('blockedbyclient');
  });
  context.on('request', (req) => requests.push(`${req.method()} ${req.url()}`));
  context.on('requestfailed', (req) => {
    problem(`request failed: ${req.method()} ${req.url()}: ${req.failure()?.errorText}`);
  });
  context.on('response', (resp) => {
    if (resp.status() >= 400) problem(`HTTP ${resp.status()}: ${resp.request().method()} ${resp.url()}`);
  });

  page = await context.newPage();
  page.on('pageerror', (err) => problem(`JavaScript error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problem(`console error: ${msg.text()}`);
  });

  const url = new URL('/playground', base).toString();
  log(`opening ${url} in ${executablePath}`);
  await guard(page.goto(url, { waitUntil: 'load', timeout: STEP_MS }));
  await guard(page.locator('.graphiql-container').waitFor({ timeout: STEP_MS }));

  // The key: typed into the box, sent with the introspection query that follows, kept.
  await checkIntrospection(page, () => page.locator('#api-key').fill(apiKey), 'typing the key');
  const stored = await page.evaluate(() => window.localStorage.getItem('tokenql.apiKey'));
  if (stored !== apiKey) throw new Error(`the key was not kept in localStorage (got ${stored})`);
  log('the typed key is sent and kept; the schema is loaded');

  // The docs explorer, from the introspected schema: Query and its two connections.
  await openDocs(page);

  // Every example tab runs as it is and shows data: the first one as the page opens, the
  // others after switching to them.
  const tabs = page.locator('.graphiql-tab');
  const count = await tabs.count();
  if (count !== EXAMPLES.length) throw new Error(`expected ${EXAMPLES.length} example tabs, found ${count}`);
  for (const [i, [operation, path, needles]] of EXAMPLES.entries()) {
    if (i > 0) await tabs.nth(i).locator('.graphiql-tab-button').click();
    if (path === null) await runSubscriptionTab(page, operation, needles);
    else await runActiveTab(page, operation, path, needles);
  }

  // Coming back: the key is still in the box and sent at once, the tabs are the same.
  // (GraphiQL saves its editors and tabs 500 ms after a change; reloading sooner than that
  // makes it add a tab mixing two of them, so the test waits as a person would.)
  await page.waitForTimeout(1500);
  await checkIntrospection(page, () => page.reload({ waitUntil: 'load', timeout: STEP_MS }), 'reloading');
  const kept = await page.locator('#api-key').inputValue();
  if (kept !== apiKey) throw new Error(`after a reload the key box holds ${JSON.stringify(kept)}`);
  const again = await tabs.count();
  if (again !== EXAMPLES.length) {
    throw new Error(`after a reload there are ${again} tabs instead of ${EXAMPLES.length}`);
  }
  log(`after a reload: the key is back and sent, the ${again} tabs are kept`);

  // The picture: the first example's answer, with the docs explorer open.
  await tabs.nth(0).locator('.graphiql-tab-button').click();
  if (!(await page.locator('.graphiql-doc-explorer').isVisible())) await openDocs(page);
  await runActiveTab(page, 'NftsByWallet', ['nftsByWallet'], ['"edges"', '"tokenAddress"', '38']);

  if (problems.length) throw new Error('problems while using the page');
  mkdirSync(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot });

  // A newcomer's link (`serve --demo` prints it): a fresh browser profile opens
  // /playground#key=KEY; the key fills the box, goes with the first request, is kept, and
  // leaves the address bar; the first example runs with one click.
  const fresh = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await fresh.route('**/*', (route) => {
    const u = route.request().url();
    if (isLocal(u)) return route.continue();
    problem(`request to another host: ${u}`);
    return route.abort('blockedbyclient');
  });
  fresh.on('request', (req) => requests.push(`${req.method()} ${req.url()}`));
  fresh.on('response', (resp) => {
    if (resp.status() >= 400) problem(`HTTP ${resp.status()}: ${resp.request().method()} ${resp.url()}`);
  });
  page = await fresh.newPage();
  page.on('pageerror', (err) => problem(`JavaScript error: ${err.message}`));
  const link = `${url}#key=${encodeURIComponent(apiKey)}`;
  await checkIntrospection(page, () => page.goto(link, { waitUntil: 'load', timeout: STEP_MS }), 'opening the link');
  const boxed = await page.locator('#api-key').inputValue();
  if (boxed !== apiKey) throw new Error(`the link's key is not in the box (${JSON.stringify(boxed)})`);
  if (page.url().includes(apiKey)) throw new Error(`the key stayed in the address bar: ${page.url()}`);
  const keptByLink = await page.evaluate(() => window.localStorage.getItem('tokenql.apiKey'));
  if (keptByLink !== apiKey) throw new Error(`the link's key was not kept (got ${keptByLink})`);
  await runActiveTab(page, 'NftsByWallet', ['nftsByWallet'], ['"edges"', '"tokenAddress"']);
  log('a link with the key: the key is in the box, sent, kept and gone from the address bar');

  const hosts = new Set(requests.map((r) => new URL(r.split(' ')[1]).host));
  log(`${requests.length} requests, all to ${[...hosts].join(', ')}; screenshot: ${screenshot}`);
  ok = true;
} catch (err) {
  log(`FAILED: ${err.message}`);
  if (page) {
    const failure = screenshot.replace(/(\.png)?$/, '-failure.png');
    await page.screenshot({ path: failure }).catch(() => {});
    log(`screenshot of the failure: ${failure}`);
  }
} finally {
  await browser?.close().catch(() => {});
}

if (problems.length) {
  ok = false;
  log(`${problems.length} problem(s):\n  ${problems.join('\n  ')}`);
}
if (!ok) {
  log(`requests made:\n  ${requests.join('\n  ')}`);
  process.exit(1);
}
