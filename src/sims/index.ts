/** src/sims — simulators that run inside IMEP's process (public face). Each declares its fact in its spec. */
export * from './lite/index.js';
