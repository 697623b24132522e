// spool — the package root. Each layer is also importable on its own (`spool/delta`, …);
// here they are namespaced so names from different layers never collide.
export * as delta from "./delta/index.js";
export * as capture from "./capture/index.js";
