/**
 * The public surface of the @seglog/cli package.
 * @module @seglog/cli
 */
export {};
