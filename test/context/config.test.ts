import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  assistant,
  ConfigError,
  contextConfigFromEnv,
  contextConfigFromOptions,
  DEFAULT_CONTEXT_CONFIG,
  MemoryArchive,
  prepareHistory,
  textOf,
  toolResult,
} from "../../src/context/index.js";
import { lines } from "./helpers.js";

const VARS = [
  "SPOOL_TOOL_RESULT_MAX_CHARS",
  "SPOOL_TOOL_RESULT_BUDGET_CHARS",
  "SPOOL_MICROCOMPACT_TRUNCATE_TURNS",
  "SPOOL_MICROCOMPACT_SUMMARIZE_TURNS",
  "SPOOL_MICROCOMPACT_HEAD_CHARS",
  "SPOOL_MICROCOMPACT_TAIL_CHARS",
  "SPOOL_MICROCOMPACT_MIN_CONTENT",
  "SPOOL_MICROCOMPACT_INPUT_MAX_CHARS",
] as const;

describe("contextConfigFromEnv", () => {
  it("has the documented defaults", () => {
    expect(contextConfigFromEnv({})).toEqual({
      maxResultChars: 20_000,
      turnBudgetChars: 200_000,
      truncateTurns: 2,
      summarizeTurns: 4,
      microHeadChars: 2_000,
      microTailChars: 500,
      minContent: 3_000,
      summarizeMinChars: 1_000,
      inputMaxChars: 8_000,
      archiveMaxBytes: 256 * 1024 * 1024,
      archiveTtlMs: 7 * 24 * 3_600_000,
    });
    expect(DEFAULT_CONTEXT_CONFIG).toEqual(contextConfigFromEnv({}));
  });

  it("every variable overrides its setting", () => {
    const c = contextConfigFromEnv({
      SPOOL_TOOL_RESULT_MAX_CHARS: "1000",
      SPOOL_TOOL_RESULT_BUDGET_CHARS: "9000",
      SPOOL_MICROCOMPACT_TRUNCATE_TURNS: "3",
      SPOOL_MICROCOMPACT_SUMMARIZE_TURNS: "6",
      SPOOL_MICROCOMPACT_HEAD_CHARS: "100",
      SPOOL_MICROCOMPACT_TAIL_CHARS: "50",
      SPOOL_MICROCOMPACT_MIN_CONTENT: "400",
      SPOOL_MICROCOMPACT_SUMMARIZE_MIN_CHARS: "300",
      SPOOL_MICROCOMPACT_INPUT_MAX_CHARS: "2000",
      SPOOL_ARCHIVE_MAX_MB: "0",
      SPOOL_ARCHIVE_TTL: "1h30m",
    });
    expect(c).toEqual({
      maxResultChars: 1_000,
      turnBudgetChars: 9_000,
      truncateTurns: 3,
      summarizeTurns: 6,
      microHeadChars: 100,
      microTailChars: 50,
      minContent: 400,
      summarizeMinChars: 300,
      inputMaxChars: 2_000,
      archiveMaxBytes: 0,
      archiveTtlMs: 5_400_000,
    });
  });

  it.each(["abc", "0", "-5", "1.5", "12kb"])("an invalid value %j is an error naming the variable", (value) => {
    for (const name of VARS) {
      const env = { [name]: value, ...(name === "SPOOL_MICROCOMPACT_TRUNCATE_TURNS" ? { SPOOL_MICROCOMPACT_SUMMARIZE_TURNS: "9" } : {}) };
      let caught: unknown;
      try {
        contextConfigFromEnv(env);
      } catch (err) {
        caught = err;
      }
      expect(caught, name).toBeInstanceOf(ConfigError);
      expect((caught as ConfigError).code).toBe("SPOOL_CONTEXT_CONFIG");
      expect((caught as Error).message).toContain(name);
      expect((caught as Error).message).toContain(JSON.stringify(value));
    }
  });

  it("archive TTL accepts Go-style durations and 0, and rejects anything else by name", () => {
    expect(contextConfigFromEnv({ SPOOL_ARCHIVE_TTL: "168h" }).archiveTtlMs).toBe(7 * 24 * 3_600_000);
    expect(contextConfigFromEnv({ SPOOL_ARCHIVE_TTL: "7d" }).archiveTtlMs).toBe(7 * 24 * 3_600_000);
    expect(contextConfigFromEnv({ SPOOL_ARCHIVE_TTL: "0" }).archiveTtlMs).toBe(0);
    expect(() => contextConfigFromEnv({ SPOOL_ARCHIVE_TTL: "soon" })).toThrow(/SPOOL_ARCHIVE_TTL/);
    expect(() => contextConfigFromEnv({ SPOOL_ARCHIVE_MAX_MB: "-1" })).toThrow(/SPOOL_ARCHIVE_MAX_MB/);
  });

  it("summarising before truncating is rejected", () => {
    expect(() => contextConfigFromEnv({ SPOOL_MICROCOMPACT_TRUNCATE_TURNS: "5", SPOOL_MICROCOMPACT_SUMMARIZE_TURNS: "3" })).toThrow(
      /SPOOL_MICROCOMPACT_SUMMARIZE_TURNS/,
    );
  });

  it("an option given explicitly replaces its variable, which is then not read (a bad one is no error)", () => {
    const env = { SPOOL_TOOL_RESULT_MAX_CHARS: "lots", SPOOL_ARCHIVE_TTL: "soon", SPOOL_MICROCOMPACT_SUMMARIZE_TURNS: "1" };
    expect(() => contextConfigFromEnv(env)).toThrow(ConfigError);
    const c = contextConfigFromEnv(env, { maxResultChars: 500, archiveTtlMs: 0, summarizeTurns: 6 });
    expect(c).toMatchObject({ maxResultChars: 500, archiveTtlMs: 0, summarizeTurns: 6, turnBudgetChars: 200_000 });
    const h = [assistant("", [{ id: "a", name: "read" }]), toolResult("a", lines(8_000, 1))];
    const config = { maxResultChars: 50_000, archiveTtlMs: 0, summarizeTurns: 6 };
    expect(prepareHistory(h, { archive: new MemoryArchive(), env, config }).report.changed).toBe(false);
  });

  it("contextConfigFromOptions names a bad option as the caller wrote it", () => {
    expect(contextConfigFromOptions({ maxResultChars: 1_000 }, {}).maxResultChars).toBe(1_000);
    expect(() => contextConfigFromOptions({ minContent: 0 }, {}, "opts")).toThrow(/^opts\.minContent: expected a whole number of 1 or more, got 0\.$/);
    expect(() => contextConfigFromOptions({ summarizeTurns: 1 }, { SPOOL_MICROCOMPACT_TRUNCATE_TURNS: "3" })).toThrow(
      /^context\.summarizeTurns: is 1, below SPOOL_MICROCOMPACT_TRUNCATE_TURNS \(3\)/,
    );
  });

  it("any value either configures or fails with a ConfigError", () => {
    fc.assert(
      fc.property(fc.constantFrom(...VARS, "SPOOL_ARCHIVE_TTL", "SPOOL_ARCHIVE_MAX_MB"), fc.string(), (name, value) => {
        try {
          contextConfigFromEnv({ [name]: value });
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("prepareHistory reads the limits from the environment it is given", () => {
    const h = [assistant("", [{ id: "a", name: "read" }]), toolResult("a", lines(8_000, 1))];
    const archive = new MemoryArchive();
    expect(prepareHistory(h, { archive, env: {} }).report.changed).toBe(false);
    const cut = prepareHistory(h, { archive, env: { SPOOL_TOOL_RESULT_MAX_CHARS: "1000" } });
    expect(textOf(cut.messages[1]!)).toMatch(/^\[Partial tool result/);
    expect(() => prepareHistory(h, { archive, env: { SPOOL_TOOL_RESULT_MAX_CHARS: "many" } })).toThrow(/SPOOL_TOOL_RESULT_MAX_CHARS/);
  });
});
