/**
 * `npm run build`'s last step: bundles the service's browser scripts into dist/, each beside its
 * source's place (dist/src/explorer/browser/map.js), where the compiled service reads them (see
 * browser-bundle.ts).
 */
import { fileURLToPath } from 'node:url';
import { bundleBrowserScripts, writeBundles } from './browser-bundle.js';

const outDir = fileURLToPath(new URL('../../dist/', import.meta.url));
writeBundles(outDir, bundleBrowserScripts());
process.stdout.write(`browser scripts bundled into ${outDir}\n`);
