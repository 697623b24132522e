// The SQLite schema: scalar values and list items keyed by scope, plus our session table. scope_id ''
// is the session scope.
// Lists page on the primary key; see the query-plan test.
export const APPLICATION_ID = 0x53504f4c; // "SPOL"
export const SCHEMA_VERSION = 1;

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  session_id TEXT NOT NULL PRIMARY KEY,
  next_seq INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  forked_from TEXT,
  forked_at_seq INTEGER
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS scalar_values (
  session_id TEXT NOT NULL,
  scope_id TEXT NOT NULL,
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  seq INTEGER NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (session_id, scope_id, namespace, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS list_values (
  session_id TEXT NOT NULL,
  scope_id TEXT NOT NULL,
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  seq INTEGER NOT NULL,
  value TEXT NOT NULL,
  tag TEXT NULL,
  PRIMARY KEY (session_id, scope_id, namespace, key, seq)
) WITHOUT ROWID;
`;

export const SQL = {
  nextSeq: "SELECT next_seq FROM sessions WHERE session_id = ?",
  setNextSeq: "UPDATE sessions SET next_seq = ? WHERE session_id = ?",
  insertSession: "INSERT INTO sessions (session_id, next_seq, created_at, forked_from, forked_at_seq) VALUES (?, ?, ?, ?, ?)",
  getValue: "SELECT value FROM scalar_values WHERE session_id = ? AND scope_id = ? AND namespace = ? AND key = ?",
  setValue:
    "INSERT INTO scalar_values (session_id, scope_id, namespace, key, seq, value) VALUES (?, ?, ?, ?, ?, ?) " +
    "ON CONFLICT (session_id, scope_id, namespace, key) DO UPDATE SET seq = excluded.seq, value = excluded.value",
  deleteValue: "DELETE FROM scalar_values WHERE session_id = ? AND scope_id = ? AND namespace = ? AND key = ?",
  append: "INSERT INTO list_values (session_id, scope_id, namespace, key, seq, value, tag) VALUES (?, ?, ?, ?, ?, ?, ?)",
  deleteList: "DELETE FROM list_values WHERE session_id = ? AND scope_id = ? AND namespace = ? AND key = ?",
  retireValues: "DELETE FROM scalar_values WHERE session_id = ? AND scope_id = ?",
  retireLists: "DELETE FROM list_values WHERE session_id = ? AND scope_id = ?",
  pageAsc:
    "SELECT seq, value, tag FROM list_values WHERE session_id = ? AND scope_id = ? AND namespace = ? AND key = ? AND seq > ? " + "ORDER BY seq ASC LIMIT ?",
  pageDesc:
    "SELECT seq, value, tag FROM list_values WHERE session_id = ? AND scope_id = ? AND namespace = ? AND key = ? AND seq < ? " + "ORDER BY seq DESC LIMIT ?",
  countValues: "SELECT count(*) AS n FROM scalar_values WHERE session_id = ? AND scope_id = ''",
  countLists:
    "SELECT count(*) AS lists, coalesce(sum(n), 0) AS elements FROM " +
    "(SELECT count(*) AS n FROM list_values WHERE session_id = ? AND scope_id = '' GROUP BY namespace, key)",
} as const;
