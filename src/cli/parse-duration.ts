// Durations on the command line: a plain decimal number of seconds, or one with a unit — s, m, h, d
// (as GNU timeout takes them) and w — e.g. 90, 1.5, 5m, 12h, 7d. Only that: Number() took "0x10" as
// 16 s, "1e3" as 1000 s and " 5 " as 5 s, while "5m", the form `timeout` users type, was refused.
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 };

const DURATION = /^(\d+(?:\.\d*)?|\.\d+)([smhdw]?)$/;

/** Seconds, or undefined when `text` is not a duration; `unit: "required"` refuses a bare number. */
export function parseDuration(text: string, unit: "optional" | "required" = "optional"): number | undefined {
  const m = DURATION.exec(text);
  if (m === null || (unit === "required" && m[2] === "")) return undefined;
  return Number(m[1]) * (m[2] === "" ? 1 : UNIT_SECONDS[m[2]!]!);
}
