// Keeps each workspace's tsconfig "references" equal to its @memex/* dependencies, so
// `tsc -b` builds in dependency order. Run after adding a workspace dependency.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const { workspaces } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const dirs = workspaces
  .flatMap((pattern) =>
    pattern.endsWith('/*')
      ? fs.readdirSync(path.join(root, pattern.slice(0, -2))).map((name) => path.join(pattern.slice(0, -2), name))
      : [pattern],
  )
  .filter((dir) => fs.existsSync(path.join(root, dir, 'package.json')));
const byName = new Map(
  dirs.map((dir) => [JSON.parse(fs.readFileSync(path.join(root, dir, 'package.json'), 'utf8')).name, dir]),
);
for (const dir of dirs) {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, dir, 'package.json'), 'utf8'));
  const tsconfigPath = path.join(root, dir, 'tsconfig.json');
  if (!fs.existsSync(tsconfigPath)) continue;
  const tsconfig = JSON.parse(fs.readFileSync(tsconfigPath, 'utf8'));
  const deps = { ...pkg.dependencies, ...pkg.devDependencies };
  tsconfig.references = Object.keys(deps)
    .filter((name) => byName.has(name))
    .sort()
    .map((name) => ({ path: path.relative(path.join(root, dir), path.join(root, byName.get(name))) }));
  fs.writeFileSync(tsconfigPath, JSON.stringify(tsconfig, null, 2) + '\n');
}
fs.writeFileSync(
  path.join(root, 'tsconfig.json'),
  JSON.stringify({ files: [], references: dirs.map((dir) => ({ path: dir })) }, null, 2) + '\n',
);
console.log(`synced references of ${dirs.length} workspaces`);
