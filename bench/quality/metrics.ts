// Public entry point of the quality metrics (pure TypeScript, no I/O).
export * from './matte.js';
export * from './alpha-metrics.js';
export * from './mask-metrics.js';
export * from './halo.js';
export { gradientMagnitude, gaussianKernels, gaussianHalfSize } from './gaussian-gradient.js';
export { largestComponent } from './connected-components.js';
