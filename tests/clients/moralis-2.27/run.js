// The real `moralis` package of this folder's node_modules, driven by ../harness.js
// (usage and output format are described there).
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const versions = {};
for (const name of ['moralis', '@moralisweb3/evm-api', '@moralisweb3/common-evm-utils', '@moralisweb3/api-utils', '@moralisweb3/common-core']) {
  const file = path.join(__dirname, 'node_modules', name, 'package.json');
  versions[name] = JSON.parse(fs.readFileSync(file, 'utf8')).version;
}
require('../harness.js').run(require('moralis').default, versions);
