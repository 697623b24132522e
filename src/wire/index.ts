// spool/wire — the SSE binding of replicated state: seq numbering from 0 per subscription, base first,
// one encoder per subscriber, one token rule for every protected route, bounded unsent bytes (per
// subscriber and process-wide); the matching client; and the static fallback that serves the built
// viewer page next to the API.
// Imports only spool/delta (and the error base); it knows nothing of tools or the harness (the state
// host is passed in).
export { createWireServer, WireError, type WireServer, type WireServerOptions } from "./server.js";
export { authorized } from "./auth.js";
export { decodeSegment, sendJson } from "./respond.js";
export { subscribe, type Subscription, type SubscribeOptions, type SubscriptionStatus } from "./client.js";
export { serveViewer, type ViewerFallback } from "./static.js";
export type { ReplicatedState, StateSource } from "./source.js";
