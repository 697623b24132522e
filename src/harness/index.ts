// spool/harness — running tool calls end to end, harness events, the lane view, the replicated-state
// host and the built-in tools. It may import every layer below it; nothing below imports it.
export { createStateHost, StateError, type MutableState, type StateHost, type BatchListener } from "./state.js";
