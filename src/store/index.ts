// spool/store — durable session storage with ephemeral scopes. Owns the scoped storage API
// (addresses, writes, one-scope transactions, retirement, tagged lists), the memory, JSONL (+ sidecar),
// SQLite and PostgreSQL backends, and the session repository. It stores JSON and knows nothing about tools,
// ops semantics or any other spool layer: it must not import from them.
export { sessionScope, ephemeralScope, MAX_ENCODED_SCOPE_ID } from "./scope.js";
export type { Scope, SessionScope, EphemeralScope } from "./scope.js";
export { value, list } from "./address.js";
export type { Value, ValueList } from "./address.js";
export { setValue, deleteValue, appendList, deleteList, retireScope } from "./write.js";
export type { Write, SetValueWrite, DeleteValueWrite, AppendListWrite, DeleteListWrite, RetireScopeWrite } from "./write.js";
export type { Store, StoreStats, ListElement, ListReadOptions, ListPage, Durability, CommitResult } from "./store.js";
export { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from "./store.js";
export { createMemoryStore } from "./memory.js";
export { openJsonlStore } from "./jsonl/store.js";
export { readJsonlSnapshot, type SessionSnapshot } from "./jsonl/snapshot.js";
export { followJsonlSession, type JsonlFollower } from "./jsonl/follow.js";
export type { JsonlStoreOptions } from "./jsonl/store.js";
export * from "./errors.js";
export { openSqliteStore } from "./sqlite/store.js";
export type { SqliteStoreOptions } from "./sqlite/store.js";
export { DEFAULT_ROOT, SESSION_ID, checkSessionId, ensureDir, isSessionId, newSessionId, sessionsDir, sidecarDir } from "./layout.js";
export { openSessionRepo } from "./repo.js";
export type { SessionRepo, SessionInfo, SessionOpenOptions, RepoBackend } from "./repo.js";
export { openPostgresStore } from "./postgres/store.js";
export type { PostgresStore, PostgresStoreOptions, ConnectionEvent } from "./postgres/store.js";
export { DatabaseError, DatabaseUrlError, LeaseLostError, SpillStoreError, type DatabaseTarget, type DatabaseProblem } from "./postgres/errors.js";
export { redactUrl } from "./postgres/redact.js";
export { readPostgresSnapshot } from "./postgres/snapshot.js";
export { listPostgresSessions, deletePostgresSession, forkPostgresSession, gcPostgresSessions } from "./postgres/catalog.js";
export type { PostgresSessionInfo, GcResult } from "./postgres/catalog.js";
export { createSpillUpload, openPostgresSpill, listPostgresSpills, DEFAULT_MAX_SPILL_BYTES } from "./postgres/spill.js";
export type { SpillUploadOptions, SpillInfo } from "./postgres/spill.js";
export { followPostgresCommits, type CommitNotice, type Follower, type FollowOptions } from "./postgres/follow.js";
export type { DatabaseOptions } from "./postgres/session.js";
export { SPILL_CHUNK_BYTES } from "./postgres/schema.js";
export { openPostgresSessionRepo, type PostgresRepoOptions } from "./postgres/repo.js";
