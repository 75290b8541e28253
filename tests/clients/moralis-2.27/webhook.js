// A webhook receiver written against Moralis's published types, run on tokenql's deliveries
// (tests/chain/webhooks.rs): each body's `x-signature` is checked with the SDK's own
// `Moralis.Streams.verifySignature`, and each body, ERC20 transfer and NFT transfer is checked
// field by field against the interfaces `@moralisweb3/streams-typings` declares (`IWebhook`,
// `IERC20Transfer`, `INFTTransfer`, read from its index.d.ts): every required field present,
// with its declared type. A tampered body must fail verification.
//
// Usage: node webhook.js FILE, where FILE holds {"secret": "...", "deliveries": [{"body":
// "<the text received>", "signature": "0x..."}]}. Prints {"checked": N, "problems": [...]}.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const Moralis = require('moralis').default;

/** The interfaces of a .d.ts file: name -> {fields: {name: {type, optional}}, bases: [...]}. */
function interfaces(text) {
  const out = {};
  const re = /(?:export\s+)?interface\s+(\w+)(?:\s+extends\s+([\w\s,]+))?\s*\{([^}]*)\}/g;
  for (const m of text.matchAll(re)) {
    const fields = {};
    const body = m[3].replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    for (const f of body.matchAll(/(\w+)(\?)?\s*:\s*([^;]+);/g)) {
      fields[f[1]] = { type: f[3].trim(), optional: Boolean(f[2]) };
    }
    const bases = (m[2] || '').split(',').map((b) => b.trim()).filter(Boolean);
    out[m[1]] = { fields, bases };
  }
  return out;
}

/** Every field of interface `name`, its bases' included. */
function fieldsOf(types, name) {
  const t = types[name];
  if (!t) return {};
  return Object.assign({}, ...t.bases.map((b) => fieldsOf(types, b)), t.fields);
}

/** Whether `value` has TypeScript type `type` (the subset the typings use). */
function hasType(types, type, value, where, problems) {
  const options = type.split('|').map((o) => o.trim());
  if (options.length > 1) {
    return options.some((o) => hasType(types, o, value, where, []));
  }
  if (type.endsWith('[]')) {
    if (!Array.isArray(value)) return false;
    const item = type.slice(0, -2);
    value.forEach((v, i) => {
      if (!hasType(types, item, v, `${where}[${i}]`, problems)) problems.push(`${where}[${i}] is not ${item}`);
    });
    return true;
  }
  switch (type) {
    case 'string': return typeof value === 'string';
    case 'number': return typeof value === 'number';
    case 'boolean': return typeof value === 'boolean';
    case 'null': return value === null;
    case 'any': return true;
    default:
      if (!types[type]) return true; // a type alias the check does not model
      if (value === null || typeof value !== 'object') return false;
      check(types, type, value, where, problems);
      return true;
  }
}

/** Checks `value` against interface `name`, recording what is wrong in `problems`. */
function check(types, name, value, where, problems) {
  for (const [field, { type, optional }] of Object.entries(fieldsOf(types, name))) {
    if (!(field in value)) {
      if (!optional) problems.push(`${where}: ${name}.${field} is missing`);
      continue;
    }
    if (!hasType(types, type, value[field], `${where}.${field}`, problems)) {
      problems.push(`${where}: ${name}.${field} is not ${type}: ${JSON.stringify(value[field])}`);
    }
  }
}

async function main() {
  const input = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  await Moralis.start({ apiKey: 'not-used-to-verify', streamsSecret: input.secret });
  const typings = path.join(__dirname, 'node_modules', '@moralisweb3', 'streams-typings', 'index.d.ts');
  const types = interfaces(fs.readFileSync(typings, 'utf8'));
  for (const name of ['IWebhook', 'IERC20Transfer', 'INFTTransfer']) {
    if (Object.keys(fieldsOf(types, name)).length < 5) throw new Error(`typings: ${name} not found`);
  }
  const problems = [];
  input.deliveries.forEach((d, i) => {
    const body = JSON.parse(d.body);
    try {
      Moralis.Streams.verifySignature({ body, signature: d.signature });
    } catch (e) {
      problems.push(`#${i}: ${e.message}`);
    }
    check(types, 'IWebhook', body, `#${i}`, problems);
  });
  if (input.deliveries.length > 0) {
    const body = JSON.parse(input.deliveries[0].body);
    body.tag = `${body.tag}!`;
    let refused = false;
    try {
      Moralis.Streams.verifySignature({ body, signature: input.deliveries[0].signature });
    } catch (e) {
      refused = true;
    }
    if (!refused) problems.push('a tampered body verified');
  }
  console.log(JSON.stringify({ checked: input.deliveries.length, problems }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
