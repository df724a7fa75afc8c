// Builds the optional addon with node-gyp. A failed build never fails the
// install: every caller of @seglog/native falls back to plain Node, and the
// loader reports why in capabilities.reason.
//
// Offline builds: node-gyp downloads Node's headers unless it is given a
// nodedir. When neither npm_config_nodedir nor --nodedir is set and the
// running node has its headers installed beside it (<prefix>/include/node,
// e.g. /usr/include/node for /usr/bin/node), they are used.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

if (process.env.SEGLOG_NATIVE === '0') {
  console.log('@seglog/native: SEGLOG_NATIVE=0, addon not built');
  process.exit(0);
}
let gyp;
try { gyp = require.resolve('node-gyp/bin/node-gyp.js'); } catch { gyp = null; }
if (!gyp) { console.log('@seglog/native: node-gyp not found; using fallbacks'); process.exit(0); }

const args = [gyp, 'rebuild'];
if (!process.env.npm_config_nodedir) {
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  if (fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) args.push('--nodedir=' + prefix);
}
const r = spawnSync(process.execPath, args, { cwd: path.join(__dirname, '..'), stdio: 'inherit' });
if (r.status !== 0) {
  console.log('@seglog/native: build failed (' + (r.error ? r.error.message : 'status ' + r.status) + '); using fallbacks');
}
process.exit(0);
