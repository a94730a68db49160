// Run by each package's prepack: copies the repository's README, CHANGELOG, licence and notices into the package
// folder (the current directory), so that the packed tarball carries them; the copies are not kept in git. The guides
// (docs/) stay in the repository: the README's links to them are made links to the repository's copy, which is the
// one that matches the code (and leaving them out keeps the engine's installed size down).
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';

const root = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const repository = root.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');

for (const name of ['CHANGELOG.md', 'LICENSE', 'THIRD-PARTY-NOTICES.md']) copyFileSync(new URL(`../${name}`, import.meta.url), name);
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
writeFileSync('README.md', readme.replace(/\]\((docs\/[^)\s]+)\)/g, `](${repository}/blob/main/$1)`));
