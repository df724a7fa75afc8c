// Builds the optional addon with node-gyp. A failed build never fails the
// install: every caller of @seglog/native falls back to plain Node.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');
if (process.env.SEGLOG_NATIVE === '0') {
  console.log('@seglog/native: SEGLOG_NATIVE=0, addon not built');
  process.exit(0);
}
let gyp;
try { gyp = require.resolve('node-gyp/bin/node-gyp.js'); } catch { gyp = null; }
if (!gyp) { console.log('@seglog/native: node-gyp not found; using fallbacks'); process.exit(0); }
const r = spawnSync(process.execPath, [gyp, 'rebuild'], { cwd: path.join(__dirname, '..'), stdio: 'inherit' });
if (r.status !== 0) console.log('@seglog/native: build failed (status ' + r.status + '); using fallbacks');
process.exit(0);
