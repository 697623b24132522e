// The command table. Each command lives in its own file and is listed here once.
import { compactCommand } from "./compact.js";
import { gcCommand } from "./gc.js";
import { inspectCommand } from "./inspect.js";
import { mcpCommand } from "./mcp.js";
import { foldCommand } from "./fold.js";
import { recallCommand } from "./recall.js";
import { runCommand } from "./run.js";
import { serveCommand } from "./serve.js";
import { sessionsCommand } from "./sessions.js";

export interface Command {
  readonly name: string;
  readonly summary: string;
  run(args: readonly string[]): Promise<number>;
}

export const commands: readonly Command[] = [runCommand, mcpCommand, serveCommand, sessionsCommand, inspectCommand, gcCommand, compactCommand, recallCommand, foldCommand];
