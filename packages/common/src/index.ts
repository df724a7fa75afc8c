/**
 * The public surface of the @seglog/common package.
 * @module @seglog/common
 */
export { assert, AssertionError, VERIFY } from './assert.js';
export { SeglogError, isSeglogError } from './errors.js';
export type { KafkaErrorName, SeglogErrorOptions } from './errors.js';
export { startSiblingWorker } from './start-worker.js';
