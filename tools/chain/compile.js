// Compiles contracts/*.sol with solc (npm) and OpenZeppelin from node_modules, fully offline,
// and writes ABI + bytecode to ../../tests/fixtures/contracts/NAME.json.
// Usage: npm ci && npm run compile   (from tools/chain)
const fs = require("fs");
const path = require("path");
const solc = require("solc");

const src = path.join(__dirname, "contracts");
const out = path.join(__dirname, "..", "..", "tests", "fixtures", "contracts");
const sources = {};
for (const f of fs.readdirSync(src).filter((f) => f.endsWith(".sol"))) {
  sources[f] = { content: fs.readFileSync(path.join(src, f), "utf8") };
}
const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: "cancun",
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};
function findImports(p) {
  const full = path.join(__dirname, "node_modules", p);
  if (fs.existsSync(full)) return { contents: fs.readFileSync(full, "utf8") };
  return { error: "not found: " + p };
}
const result = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
const errors = (result.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}
fs.mkdirSync(out, { recursive: true });
for (const file of Object.keys(sources)) {
  for (const [name, c] of Object.entries(result.contracts[file])) {
    const artifact = { contractName: name, solc: solc.version(), abi: c.abi, bytecode: "0x" + c.evm.bytecode.object };
    fs.writeFileSync(path.join(out, name + ".json"), JSON.stringify(artifact, null, 1) + "\n");
    console.log("wrote", path.relative(process.cwd(), path.join(out, name + ".json")), (c.evm.bytecode.object.length / 2) | 0, "bytes");
  }
}
