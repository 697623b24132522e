// spool — the package root. Each layer is also importable on its own (`spool/delta`, …);
// here they are namespaced so names from different layers never collide.
export { SpoolError } from "./errors/index.js";
export * as delta from "./delta/index.js";
export * as capture from "./capture/index.js";
export * as output from "./output/index.js";
export * as store from "./store/index.js";
export * as context from "./context/index.js";
export * as harness from "./harness/index.js";
export * as wire from "./wire/index.js";
