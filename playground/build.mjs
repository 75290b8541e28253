// Bundles the playground: GraphiQL, React, graphql-js, GraphiQL's CSS and src/main.js into
// dist/playground.js and dist/playground.css (minified), then stamps index.html's asset links
// with a hash of each file (`?v=...`), so that browsers may cache the assets for good.
//
//   npm ci && npm run build      rebuild dist/ (commit it: `cargo build` needs no node)
//   node build.mjs --check       exit 1 if dist/ or index.html is not what a build would write
import { createHash } from 'node:crypto';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import * as esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
const check = process.argv.includes('--check');

// GraphiQL's CSS embeds Roboto and Fira Code as data: URLs in seven subsets each (Cyrillic,
// Greek, Vietnamese...): 360 KB of its 410. Only the basic Latin subset (U+0000-00FF and a few
// more) is kept; other scripts fall back to the system's fonts.
const latinFontsOnly = {
  name: 'latin-fonts-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]graphiql[\\/]dist[\\/]style\.css$/ }, async (args) => {
      const css = await readFile(args.path, 'utf8');
      const faces = css.match(/@font-face\s*\{[^}]*\}/g) || [];
      const latin = faces.filter((f) => /unicode-range:\s*U\+0000-00FF[,;]/.test(f));
      if (faces.length === 0 || latin.length === 0) {
        throw new Error('graphiql/style.css: no @font-face with a basic Latin range: check latinFontsOnly');
      }
      let out = css;
      for (const f of faces) if (!latin.includes(f)) out = out.replace(f, '');
      return { contents: out, loader: 'css' };
    });
  },
};

const result = await esbuild.build({
  absWorkingDir: here,
  entryPoints: { playground: 'src/main.js' },
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  platform: 'browser',
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'eof',
  charset: 'utf8',
  outdir: dist,
  write: false,
  plugins: [latinFontsOnly],
  logLevel: 'warning',
});

const outputs = new Map(result.outputFiles.map((f) => [relative(dist, f.path), f.contents]));
for (const name of ['playground.js', 'playground.css']) {
  if (!outputs.has(name)) throw new Error(`esbuild wrote no ${name}`);
}
if (outputs.size !== 2) throw new Error(`unexpected outputs: ${[...outputs.keys()].join(', ')}`);

const version = (bytes) => createHash('sha256').update(bytes).digest('hex').slice(0, 16);
const htmlPath = join(here, 'index.html');
const html = await readFile(htmlPath, 'utf8');
let stamped = html;
for (const [name, bytes] of outputs) {
  const link = new RegExp(`(/playground/assets/${name.replace('.', '\\.')})(\\?v=[0-9a-f]*)?"`, 'g');
  if (!link.test(stamped)) throw new Error(`index.html does not link /playground/assets/${name}`);
  stamped = stamped.replace(link, `$1?v=${version(bytes)}"`);
}

if (check) {
  const stale = [];
  for (const [name, bytes] of outputs) {
    const committed = await readFile(join(dist, name)).catch(() => null);
    if (!committed || !Buffer.from(bytes).equals(committed)) stale.push(`dist/${name}`);
  }
  if (stamped !== html) stale.push('index.html (asset versions)');
  if (stale.length) {
    console.error(`playground: stale ${stale.join(', ')}: run 'npm run build' in playground/`);
    process.exit(1);
  }
  console.log('playground: dist/ and index.html are up to date');
} else {
  await mkdir(dist, { recursive: true });
  for (const [name, bytes] of outputs) {
    await writeFile(join(dist, name), bytes);
    console.log(`dist/${name}: ${bytes.length} bytes`);
  }
  if (stamped !== html) await writeFile(htmlPath, stamped);
}
