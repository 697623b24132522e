// spool's exit codes, apart from exit.ts (which tells errors apart by class) so that main.ts can name
// them without loading every layer's error classes on `spool --version`.
export const EXIT = { ok: 0, failure: 1, usage: 2, timedOut: 124, interrupted: 130 } as const;
