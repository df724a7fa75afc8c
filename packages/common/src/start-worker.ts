// Starts a worker thread on a sibling module of the caller, from source or
// from dist alike. From source (the caller's file is .ts: tsx, the 'source'
// export condition) the worker registers tsx's ESM loader first and then
// imports `<name>.ts`; from dist it loads `<name>.js` directly with no extra
// flags. Used by the load client's merge workers and the log cleaner's
// compute worker.

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * A worker on the module `name` (no extension) beside `callerUrl` (the
 * caller's import.meta.url). A worker that fails to load exits with code 4
 * after printing why.
 */
export function startSiblingWorker(callerUrl: string, name: string): Worker {
  const here = new URL(callerUrl);
  if (!here.pathname.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, here), { execArgv: [] });
  // tsx's ESM entry (its 'import' condition; require.resolve gives the CommonJS one, which cannot register from a worker).
  const tsx = pathToFileURL(createRequire(here).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const entry = new URL(`./${name}.ts`, here).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { (m.register ?? m.default.register)(); return import(${JSON.stringify(entry)}); })` +
    '.catch((e) => { console.error(e); process.exit(4); });';
  return new Worker(boot, { eval: true, execArgv: ['--conditions=source'] });
}
