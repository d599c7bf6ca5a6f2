// Package entry: the library API.
import './process/threadpool-size.js'; // first: before anything starts libuv's thread pool
export { createRemover, removeBackground, closeDefaultPool, RemoveError, type Remover } from './lib/remove.js';
export type { RemoveInputOptions, RemoveOutput } from './lib/remove-api.js';
export type { RemoveOptions, SizeTier, OutputFormat, Box } from './domain/removal.js';
export type { PoolOptions } from './pool/pool-api.js';
