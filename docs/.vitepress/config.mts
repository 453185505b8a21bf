// The manual's site (`npm run docs:build`, also run by `npm run lint`). Dead links fail the build
// (VitePress's default, kept on purpose), so a renamed page cannot leave a broken link behind.
//
// The service serves this site itself at /api/manual/ (ops/build-manual.sh builds it for that path
// with MANUAL_BASE and its own output directory); without it the site is built for the root of a site.
import { defineConfig } from 'vitepress';

const base = process.env.MANUAL_BASE ?? '/';
if (!base.startsWith('/') || !base.endsWith('/')) throw new Error(`MANUAL_BASE must start and end with "/" (got "${base}")`);

export default defineConfig({
  title: 'cybercom-ts',
  description: 'A self-hosted REST API for a research group: catalog, data store and a Celery-compatible task queue',
  // Build output and Vite's cache live under the git-ignored .cache/, beside the other tools' caches.
  base,
  outDir: '../.cache/docs/dist',
  cacheDir: '../.cache/docs/vite',
  cleanUrls: false,
  lastUpdated: false,
  themeConfig: {
    // Built into the pages: no search service, nothing fetched at build or read time.
    search: { provider: 'local' },
    nav: [
      { text: 'Using the API', link: '/using-the-api' },
      { text: 'Python client', link: '/python-client' },
      { text: 'Installing', link: '/installing' },
    ],
    sidebar: [
      {
        text: 'Using the service',
        items: [
          { text: 'Using the API', link: '/using-the-api' },
          { text: 'API behaviour', link: '/api-behaviour' },
          { text: 'Python client', link: '/python-client' },
          { text: 'Data explorer', link: '/explorer' },
          { text: 'The task queue', link: '/task-queue' },
          { text: 'Running tasks on a schedule', link: '/schedules' },
          { text: 'Your own Python tasks', link: '/python-tasks' },
          { text: 'Permissions', link: '/permissions' },
        ],
      },
      {
        text: 'Running it',
        items: [
          { text: 'Installing', link: '/installing' },
          { text: 'Operating', link: '/operating' },
          { text: 'Configuration', link: '/configuration' },
          { text: 'Administration', link: '/administration' },
          { text: 'Scaling out', link: '/scaling-out' },
          { text: 'Memory budget', link: '/memory-budget' },
        ],
      },
      {
        text: 'Inside',
        items: [
          { text: 'Security model', link: '/security' },
          { text: 'Architecture', link: '/architecture' },
          { text: 'Layers', link: '/architecture/layers' },
          { text: 'Packages', link: '/architecture/packages' },
          { text: 'Benchmarks', link: '/benchmarks' },
        ],
      },
    ],
  },
});
