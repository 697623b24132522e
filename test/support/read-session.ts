// One agent session for a test file that drives the read tool: a memory store, a workspace in a temp
// directory and the tools rooted there, opened before the file's tests and closed after them.
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { createWorkspace } from "../../src/context/index.js";
import { openAgentSession, type AgentSession } from "../../src/harness/index.js";
import { createMemoryStore } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "./temp.js";

export interface ReadSession {
  /** The directory the tools run in (relative paths resolve here). */
  dir(): string;
  read(args: Record<string, unknown>, options?: Parameters<AgentSession["call"]>[2]): ReturnType<AgentSession["call"]>;
}

export function useReadSession(label: string): ReadSession {
  let dir = "";
  let session: AgentSession | undefined;
  beforeAll(async () => {
    dir = tempDir(`spool-${label}-`);
    session = await openAgentSession({
      label,
      store: createMemoryStore(),
      workspace: createWorkspace({ dir: join(dir, "ws"), keep: true }),
      tools: { cwd: dir },
    });
  });
  afterAll(async () => {
    await session?.close();
    removeTempDirs();
  });
  return { dir: () => dir, read: (args, options) => session!.call("read", args, options) };
}
