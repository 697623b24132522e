// How an answer names the part of one line it shows, when a line is read in parts (column=N): recall
// and the harness read tool both use it, so the two tools describe a long line in the same words.
// Positions are 1-based characters (JS string length, as every context budget counts).
import { countOf } from "../errors/index.js";

/**
 * `line L is N chars, shown here as chars C-D (X left out)` for a slice that stops at `nextColumn`
 * (exclusive), or `line L is shown from char C` for the rest of a line from `column` on.
 */
export function describeLinePart(line: number, lineLength: number, column: number, nextColumn?: number): string {
  if (nextColumn === undefined) return `line ${line} is shown from char ${column}`;
  const left = lineLength - (nextColumn - column);
  return `line ${line} is ${countOf(lineLength, "char")}, shown here as chars ${column}-${nextColumn - 1} (${left} left out)`;
}
