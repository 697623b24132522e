// Bad arguments or bad input to a command: the CLI prints the message and how to get help, exit 2.
// `help: false` leaves the pointer to --help out where the message already says what to do (a port
// in use), so the user reads one line.
import { SpoolError } from "../errors/index.js";

export class UsageError extends SpoolError {
  readonly help: boolean;
  constructor(message: string, options?: { cause?: unknown; help?: boolean }) {
    super("SPOOL_CLI_USAGE", message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.help = options?.help ?? true;
  }
}
