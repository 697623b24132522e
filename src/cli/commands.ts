// The command table. Each command lives in its own file and is listed here once.
import { runCommand } from "./run.js";

export interface Command {
  readonly name: string;
  readonly summary: string;
  run(args: readonly string[]): Promise<number>;
}

export const commands: readonly Command[] = [runCommand];
