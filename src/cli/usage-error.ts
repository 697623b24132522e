// Bad arguments or bad input to a command: the CLI prints the message and how to get help, exit 2.
import { SpoolError } from "../errors/index.js";

export class UsageError extends SpoolError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("SPOOL_CLI_USAGE", message, options);
  }
}
