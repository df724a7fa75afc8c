// decompress(zstd) on hostile streams: see decompress.ts for the property.
import { Codec } from '@seglog/records';
import type { FuzzTarget } from '../lib/target.js';
import { makeDecompressTarget } from './decompress.js';

export const target: FuzzTarget = makeDecompressTarget([Codec.zstd], 'zstd');
