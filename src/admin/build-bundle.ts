/**
 * Builds the admin site's components bundle ahead of time, e.g. while building a container
 * image whose root filesystem is read-only at run time:
 *
 *   tsx src/admin/build-bundle.ts [directory]      (default: ADMIN_BUNDLE_DIR, else .cache/adminjs)
 *
 * The running service then finds an up-to-date bundle there and builds nothing (bundle.ts).
 */
import { defaultBundleDir, ensureComponentsBundle } from './bundle.js';

const dir = process.argv[2] ?? defaultBundleDir();
// AdminJS reads its working directory when first imported; keep anything it writes in `dir`.
process.env.ADMIN_JS_TMP_DIR ??= dir;
const started = Date.now();
const bundle = await ensureComponentsBundle(dir);
console.log(`admin components bundle ${bundle.built ? 'built' : 'already up to date'}: ${bundle.file} (${Date.now() - started} ms)`);
