export { assert, AssertionError, VERIFY } from './assert.js';
export { SeglogError, isSeglogError } from './errors.js';
export type { KafkaErrorName, SeglogErrorOptions } from './errors.js';
