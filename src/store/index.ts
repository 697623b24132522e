// spool/store — durable session storage with ephemeral scopes. Owns the scoped storage API
// (addresses, writes, one-scope transactions, retirement, tagged lists), the memory, JSONL (+ sidecar),
// SQLite and PostgreSQL backends, and the session repository. It stores JSON and knows nothing about tools,
// ops semantics or any other spool layer: it must not import from them.
export { MAX_ENCODED_SCOPE_ID, ephemeralScope, sessionScope, type EphemeralScope, type Scope, type SessionScope } from "./scope.js";
export { list, value, type Value, type ValueList } from "./address.js";
export {
  appendList,
  deleteList,
  deleteValue,
  retireScope,
  setValue,
  type AppendListWrite,
  type DeleteListWrite,
  type DeleteValueWrite,
  type RetireScopeWrite,
  type SetValueWrite,
  type Write,
} from "./write.js";
export {
  DEFAULT_LIST_LIMIT,
  MAX_LIST_LIMIT,
  type CommitResult,
  type Durability,
  type ListElement,
  type ListPage,
  type ListReadOptions,
  type Store,
  type StoreStats,
} from "./store.js";
export { createMemoryStore } from "./memory.js";
export { openJsonlStore, type JsonlStoreOptions } from "./jsonl/store.js";
export { repairJsonlSession, type RepairedLog } from "./jsonl/repair.js";
export { sidecarName } from "./jsonl/replay.js";
export { readJsonlSnapshot, type SessionSnapshot } from "./jsonl/snapshot.js";
export { followJsonlSession, type JsonlFollower } from "./jsonl/follow.js";
export { openSqliteStore, type SqliteStoreOptions } from "./sqlite/store.js";
export { followSqliteSession, type SqliteFollower } from "./sqlite/follow.js";
export { writeFileAtomic, type AtomicWriteOptions } from "./atomic-write.js";
export { SessionDirRemovedError, warnSessionDirRemoved } from "./dir-removed.js";
export { currentOwner, ownerLiveness, type Liveness, type ProcessOwner } from "./process-owner.js";
export { lockHolder } from "./jsonl/lock.js";
export { removeIdleSession, type IdleRemoval } from "./remove-idle-session.js";
export { DEFAULT_ROOT, SESSION_ID, checkSessionId, ensureDir, isSessionId, newSessionId, sessionsDir, sidecarDir } from "./layout.js";
export { directoryProblem } from "./directory-problem.js";
export { openSessionRepo, type RepoBackend, type SessionInfo, type SessionOpenOptions, type SessionRepo } from "./repo.js";
export { openPostgresStore, type ConnectionEvent, type PostgresStore, type PostgresStoreOptions } from "./postgres/store.js";
export { DatabaseError, DatabaseUrlError, LeaseLostError, SpillStoreError, type DatabaseProblem, type DatabaseTarget } from "./postgres/errors.js";
export { redactUrl } from "./postgres/redact.js";
export { readPostgresSnapshot } from "./postgres/snapshot.js";
export { followPostgresSession, type PostgresSessionFollower } from "./postgres/follow-session.js";
export {
  deletePostgresSession,
  forkPostgresSession,
  gcPostgresSessions,
  listPostgresSessions,
  openPostgresCatalog,
  type GcResult,
  type PostgresCatalog,
  type PostgresSessionHead,
  type PostgresSessionInfo,
} from "./postgres/catalog.js";
export {
  DEFAULT_MAX_SPILL_BYTES,
  createSpillUpload,
  listPostgresSpills,
  openPostgresSpill,
  type SpillInfo,
  type SpillUploadOptions,
} from "./postgres/spill.js";
export { followPostgresCommits, type CommitNotice, type FollowOptions, type Follower } from "./postgres/follow.js";
export { type DatabaseOptions } from "./postgres/session.js";
export { SPILL_CHUNK_BYTES } from "./postgres/schema.js";
export { openPostgresSessionRepo, type PostgresRepoOptions } from "./postgres/repo.js";
export {
  AddressError,
  CorruptSessionError,
  EmptySessionError,
  MixedScopeError,
  ReadOptionsError,
  ScopeIdError,
  SessionChangedError,
  SessionDirError,
  SessionExistsError,
  SessionIdError,
  SessionLockedError,
  SessionLogRemovedError,
  SessionNotFoundError,
  StoreClosedError,
  StoreFailedError,
  StoreFullError,
  UnsupportedFormatError,
  WriteError,
} from "./errors.js";
