// How the context passes (budget, microcompaction) read their numeric options: a positive number is
// used (rounded down), anything else — missing, zero, negative, NaN — means the default. Lenient on
// purpose: these options come from code, and strict checks of environment settings are config.ts's.
export function positiveOr(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
}
