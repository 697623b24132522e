// The human report of one prepareHistory pass (what `spool compact` prints to stderr). Exact: each
// kind of repair is counted under its own name (a duplicate is not an "orphan", a late result is
// not "missing"), characters are measured the way budgets measure them, and a pass that adds text
// (synthetic results on a tiny history) says so instead of printing a negative saving.
import { countOf } from "../errors/index.js";
import { formatMarker } from "./archive-key.js";
import type { PrepareReport } from "./prepare.js";

export interface ReportContext {
  readonly format: string;
  readonly messagesIn: number;
  readonly messagesOut: number;
  readonly workspaceDir?: string;
  /** What the provider's rules still find in the output (validateForProvider messages). */
  readonly problems?: readonly string[];
  /** The command name the lines start with. */
  readonly label?: string;
}

export function describePrepareReport(r: PrepareReport, ctx: ReportContext): string {
  const p = r.pairing;
  const label = ctx.label ?? "spool compact";
  const lines = [`${label}: ${ctx.format}, ${countOf(ctx.messagesIn, "message")} in, ${ctx.messagesOut} out`];
  const repairs: string[] = [];
  if (p.syntheticResultsInjected > 0)
    repairs.push(`${countOf(p.syntheticResultsInjected, "call")} without any result answered with an error result (${p.missingToolUseIds.join(", ")})`);
  if (p.lateResults > 0)
    repairs.push(`${countOf(p.lateResults, "late result")} removed; the call is answered with its recall marker (${p.lateResultIds.join(", ")})`);
  if (p.orphanResultsRemoved > 0) repairs.push(`${countOf(p.orphanResultsRemoved, "orphan result")} removed (${p.orphanToolResultIds.join(", ")})`);
  if (p.duplicateResultsRemoved > 0) repairs.push(`${countOf(p.duplicateResultsRemoved, "duplicate result")} removed (${p.duplicateResultIds.join(", ")})`);
  if (p.placeholdersInserted > 0)
    repairs.push(`${countOf(p.placeholdersInserted, "user message")} naming removed results kept where they stood between two assistant messages`);
  if (p.resultsRelocated > 0) repairs.push(`${countOf(p.resultsRelocated, "result")} moved back next to the call`);
  if (p.duplicateToolUsePruned > 0) repairs.push(`${countOf(p.duplicateToolUsePruned, "empty-id call")} pruned`);
  if (r.idsRewritten.length > 0)
    repairs.push(`${countOf(r.idsRewritten.length, "reused call id")} renamed (${r.idsRewritten.map((w) => `${w.from} → ${w.to}`).join(", ")})`);
  lines.push(`  repairs: ${repairs.length > 0 ? repairs.join("; ") : "none needed"}`);
  lines.push(`  tool results: ${r.resultsBefore} before, ${r.resultsAfter} after`);
  lines.push(`  tool-result chars: ${r.charsBefore} before, ${r.charsAfter} after${change(r.charsBefore, r.charsAfter)}`);
  if (r.imageCharsBefore > 0)
    lines.push(`  tool-result image chars: ${r.imageCharsBefore} before, ${r.imageCharsAfter} after${change(r.imageCharsBefore, r.imageCharsAfter)}`);
  const b = r.budget;
  lines.push(
    `  budget: ${countOf(b.resultsTruncated, "result")} cut to a preview${b.resultsReferenced > 0 ? ` (${b.resultsReferenced} referencing text saved earlier)` : ""}` +
      (b.recallsRefit > 0 ? `, ${countOf(b.recallsRefit, "recall answer")} given again as a shorter page (their share of the turn, or their limit)` : ""),
  );
  const m = r.microcompact;
  lines.push(
    `  microcompact: ${m.truncated} truncated${m.failedKept > 0 ? ` (${m.failedKept} failed or error result(s) kept as a preview with their error lines)` : ""}, ` +
      `${m.summarized} summarized, ${countOf(m.preserved, "old write/edit acknowledgement")} kept whole` +
      (m.imagesCleared > 0 ? `, ${countOf(m.imagesCleared, "old image")} cleared` : "") +
      (m.inputsCleared > 0 ? `, ${countOf(m.inputsCleared, "long string")} of old tool-call inputs cleared` : ""),
  );
  lines.push(`  files saved: ${r.filesSaved.length > 0 ? r.filesSaved.join(", ") : "none"}`);
  lines.push(`  keys archived: ${r.keysArchived.length > 0 ? r.keysArchived.map(formatMarker).join(" ") : "none"}`);
  if (r.orphanKeys.length > 0) lines.push(`  removed results are recallable: ${r.orphanKeys.map(formatMarker).join(" ")}`);
  for (const e of [...b.errors, ...m.errors]) lines.push(`  warning: ${e}`);
  for (const problem of ctx.problems ?? []) lines.push(`  provider check: ${problem}`);
  if (ctx.workspaceDir !== undefined) lines.push(`  workspace: ${ctx.workspaceDir} (read any key back with: spool recall KEY --workspace ${ctx.workspaceDir})`);
  return lines.join("\n") + "\n";
}

function change(before: number, after: number): string {
  if (before === after) return before === 0 ? "" : " (unchanged)";
  if (after > before) return ` (${after - before} more: repairs added text)`;
  return ` (${(((before - after) / before) * 100).toFixed(1)}% less)`;
}
