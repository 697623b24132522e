// The invariant test: random histories in any format, randomly damaged, come out of prepareHistory
// valid for the provider, stable under a second pass (same array, nothing written), and lossless —
// every original result's text is still there or recallable byte-identically.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { modelMessageSchema } from "ai";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  adapters,
  archiveKey,
  createWorkspace,
  FORMATS,
  MemoryArchive,
  prepareHistory,
  recall,
  textOf,
  validateForProvider,
  validatePairing,
  type ArchiveStore,
  type Format,
  type KeyLookup,
  type Message,
  type PrepareOptions,
} from "../../src/context/index.js";
import { damage, DAMAGES, history } from "./gen.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const LONG = process.env["SPOOL_LONG"] === "1";
/** fast-check runs synchronously; the timeout only has to cover a slow CI machine (or the long run). */
const TIMEOUT = LONG ? 3_600_000 : 240_000;
const aiSdkMessages = modelMessageSchema.array();
const small = { maxResultChars: 4_000, turnBudgetChars: 14_000, microHeadChars: 600, microTailChars: 200, minContent: 1_500 };

const scenario = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  turns: fc.integer({ min: 1, max: 9 }),
  format: fc.constantFrom<Format | "neutral">(...FORMATS, "neutral"),
  damages: fc.array(fc.tuple(fc.constantFrom(...DAMAGES), fc.nat(1000), fc.nat(100_000)), { maxLength: 6 }),
  smallLimits: fc.boolean(),
  /** AI SDK tool approvals (for the AI SDK format only, the one that carries them). */
  approvals: fc.boolean(),
  turn: fc.option(fc.integer({ min: 0, max: 14 }), { nil: undefined }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer S> ? S : never;

function withApprovals(s: Scenario): boolean {
  return s.approvals && s.format === "ai-sdk";
}

function build(s: Scenario): Message[] {
  let h = history(s.seed, s.turns, { approvals: withApprovals(s) });
  for (const [kind, a, b] of s.damages) h = damage(h, kind, a, b, s.seed);
  return h;
}

/** Reading the history as the provider would have sent it. */
function viaFormat(format: Format | "neutral", h: readonly Message[]): readonly Message[] {
  if (format === "neutral") return h;
  const adapter = adapters[format];
  return adapter.fromProvider(JSON.parse(JSON.stringify(adapter.toProvider(h))) as unknown[]);
}

/** How often each path was exercised, so the property cannot pass vacuously. */
const seen = { runs: 0, repaired: 0, budgetCut: 0, truncated: 0, summarized: 0, orphansArchived: 0, recalled: 0, approvalsRenamed: 0, sharedIds: 0 };

/** Every AI SDK approval request names a call of its own assistant message; returns how many name a renamed call. */
function checkApprovals(wire: readonly Record<string, unknown>[], renamed: ReadonlySet<string>): number {
  let n = 0;
  for (const m of wire) {
    if (m["role"] !== "assistant" || !Array.isArray(m["content"])) continue;
    const parts = m["content"] as Record<string, unknown>[];
    const calls = new Set(parts.filter((p) => p["type"] === "tool-call").map((p) => p["toolCallId"]));
    for (const p of parts) {
      if (p["type"] !== "tool-approval-request") continue;
      expect(calls.has(p["toolCallId"]), `approval ${String(p["approvalId"])} names ${String(p["toolCallId"])}, a call of its message`).toBe(true);
      if (renamed.has(p["toolCallId"] as string)) n++;
    }
  }
  return n;
}

function check(s: Scenario, options: PrepareOptions, lookup: KeyLookup, snapshot: () => string): void {
  const input = viaFormat(s.format, build(s));
  const opts: PrepareOptions = {
    ...options,
    env: {},
    config: s.smallLimits ? small : {},
    ...(s.turn !== undefined ? { turn: s.turn } : {}),
    // a history with approvals exists only in the AI SDK's format, and is judged by its rules alone
    ...(withApprovals(s) ? { format: "ai-sdk" as const } : {}),
  };
  const first = prepareHistory(input, opts);
  const out = first.messages;
  const r = first.report;
  seen.runs++;
  if (
    r.pairing.syntheticResultsInjected +
      r.pairing.orphanResultsRemoved +
      r.pairing.duplicateToolUsePruned +
      r.pairing.resultsRelocated +
      r.pairing.callIdsRenamed.length >
    0
  )
    seen.repaired++;
  if (r.pairing.callIdsRenamed.length > 0) seen.sharedIds++;
  if (r.budget.resultsTruncated > 0) seen.budgetCut++;
  if (r.microcompact.truncated > 0) seen.truncated++;
  if (r.microcompact.summarized > 0) seen.summarized++;
  if (r.orphanKeys.length > 0) seen.orphansArchived++;

  expect(validatePairing(out)).toEqual([]);
  for (const format of withApprovals(s) ? (["ai-sdk"] as const) : FORMATS) {
    const wire = adapters[format].toProvider(out);
    expect(adapters[format].check(wire), format).toEqual([]);
    // every provider rule; role alternation only must not get worse (the generator writes user text after results)
    const rules = validateForProvider(out, format);
    expect(
      rules.filter((p) => p.rule !== "roles_alternate"),
      format,
    ).toEqual([]);
    expect(rules.length, format).toBeLessThanOrEqual(validateForProvider(input, format).filter((p) => p.rule === "roles_alternate").length);
    // The AI SDK's own schema is an independent oracle for the shape of what we emit.
    if (format === "ai-sdk") {
      expect(aiSdkMessages.safeParse(wire).success).toBe(true);
      if (checkApprovals(wire as Record<string, unknown>[], new Set(r.idsRewritten.map((w) => w.to))) > 0) seen.approvalsRenamed++;
    }
  }

  const before = snapshot();
  const second = prepareHistory(out, opts);
  expect(second.messages).toBe(out);
  expect(second.report.changed).toBe(false);
  expect(snapshot()).toBe(before);

  if (s.format !== "neutral") {
    const adapter = adapters[s.format];
    const wire = adapter.toProvider(out);
    const reread = adapter.fromProvider(JSON.parse(JSON.stringify(wire)) as unknown[]);
    const third = prepareHistory(reread, opts);
    expect(adapter.toProvider(third.messages)).toEqual(wire);
    expect(snapshot()).toBe(before);
  }

  const present = new Set(out.filter((m) => m.role === "tool").map(textOf));
  const outText = out.map(textOf).join("\n");
  for (const m of input) {
    if (m.role !== "tool") continue;
    const original = textOf(m);
    if (original === "" || present.has(original)) continue;
    const key = archiveKey(original);
    expect(outText.includes(`<<ccr:${key}>>`) || first.report.orphanKeys.includes(key), `key ${key} of a cut result is reachable`).toBe(true);
    expect(recall(`<<ccr:${key}>>`, lookup).text).toBe(original);
    seen.recalled++;
  }
}

describe("prepareHistory properties", () => {
  afterAll(removeTempDirs);

  it(
    "damaged histories in every format come out valid, idempotent and lossless (memory archive)",
    () => {
      const archive: ArchiveStore = new MemoryArchive();
      fc.assert(
        fc.property(scenario, (s) => {
          check(s, { archive }, archive, () => String(archive.stats().entries));
        }),
        { numRuns: LONG ? 20_000 : 2_000 },
      );
      expect(seen.runs).toBeGreaterThanOrEqual(2_000);
      for (const key of ["repaired", "budgetCut", "truncated", "summarized", "orphansArchived", "sharedIds"] as const) {
        expect(seen[key] / seen.runs, `share of runs where ${key}`).toBeGreaterThan(0.05);
      }
      expect(seen.recalled).toBeGreaterThan(seen.runs);
      // approvals are generated for the AI SDK format only (one run in ten)
      expect(seen.approvalsRenamed / seen.runs, "share of runs where an approved call was renamed").toBeGreaterThan(0.005);
    },
    TIMEOUT,
  );

  it(
    "the same holds with a real workspace on disk, and a second pass writes no file",
    () => {
      const ws = createWorkspace({ root: tempDir("spool-context-"), sessionId: "prop", env: {} });
      const listing = () => [...readdirSync(ws.resultsDir), "|", ...readdirSync(ws.archiveDir)].join(",");
      fc.assert(
        fc.property(scenario, (s) => {
          check(s, { workspace: ws }, ws, listing);
        }),
        { numRuns: LONG ? 2_000 : 250 },
      );
      expect(readdirSync(join(ws.dir)).sort()).toEqual(["archive", "results", "spill"]);
    },
    TIMEOUT,
  );
});
