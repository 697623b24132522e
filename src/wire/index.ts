// spool/wire — the SSE binding of replicated state: seq numbering from 0 per subscription, base first,
// one encoder per subscriber, bearer-token auth, slow-subscriber dropping; the matching client; and the
// static fallback that serves the built viewer page next to the API.
// Imports only spool/delta; it knows nothing of tools or the harness (the state host is passed in).
export { createWireServer, WireError, type WireServer, type WireServerOptions } from "./server.js";
export { subscribe, type Subscription, type SubscribeOptions, type SubscriptionStatus } from "./client.js";
export { serveViewer, type ViewerFallback } from "./static.js";
export type { ReplicatedState, StateSource } from "./source.js";
