/**
 * `npm run build`'s last step: bundles the explorer's browser scripts into
 * dist/src/explorer/browser/, where the compiled service reads them (see browser-bundle.ts).
 */
import { fileURLToPath } from 'node:url';
import { bundleBrowserScripts, writeBundles } from './browser-bundle.js';

const outDir = fileURLToPath(new URL('../../dist/src/explorer/browser/', import.meta.url));
writeBundles(outDir, bundleBrowserScripts());
process.stdout.write(`explorer browser scripts bundled into ${outDir}\n`);
