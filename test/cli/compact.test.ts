// `spool compact` and `spool recall` through the built binary: damaged transcripts repaired, cut results
// read back, idempotence, the input formats, and bad input answered with one line.
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { DiskArchive } from "../../src/context/index.js";

const cwd = tempDir("spool-cli-compact-");
afterAll(removeTempDirs);
const spool = (args: string[], input?: string) => runSpool(args, { cwd, ...(input !== undefined ? { input } : {}) });

const buildLog = Array.from({ length: 2_500 }, (_, i) => `[${i}] build step ${i} compiled module_${i.toString(36)}.ts in ${i % 97}ms`).join("\n");

/** A realistic Anthropic transcript, damaged the ways sessions get damaged: an interrupt, a stray result, a missing result. */
const damaged = [
  { role: "user", content: "build it and check the config" },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Building." },
      { type: "tool_use", id: "toolu_1", name: "read", input: { path: "build.log" } },
      { type: "tool_use", id: "toolu_2", name: "bash", input: { command: "make" } },
    ],
  },
  { role: "user", content: [{ type: "text", text: "(interrupted by user)" }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: buildLog }] },
  { role: "assistant", content: "The build log is long." },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_stray", content: "a result whose call is gone" }] },
  { role: "assistant", content: "Done." },
];

describe("spool compact (built binary)", () => {
  it("fixes a damaged Anthropic transcript, lists the repairs, and spool recall prints the original from a marker", () => {
    const file = join(cwd, "damaged.json");
    writeFileSync(file, JSON.stringify({ model: "claude-x", max_tokens: 1024, messages: damaged }));
    const before = readFileSync(file, "utf8");
    const ws = join(cwd, "ws1");
    const r = spool(["compact", "--workspace", ws, file]);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("1 call without any result answered with an error result (toolu_2)");
    expect(r.stderr).toContain("1 orphan result removed (toolu_stray)");
    expect(r.stderr).toContain("1 result moved back next to the call");
    expect(r.stderr).toMatch(/tool-result chars: \d+ before, \d+ after/);
    expect(r.stderr).toContain(join(ws, "results"));
    expect(readFileSync(file, "utf8")).toBe(before);

    const out = JSON.parse(r.stdout) as { model: string; max_tokens: number; messages: { role: string; content: unknown }[] };
    expect(out.model).toBe("claude-x");
    expect(out.max_tokens).toBe(1024);
    // one user message: the results first, then the user's own text
    const results = out.messages[2]!.content as { type: string; tool_use_id: string; content: unknown; is_error?: boolean }[];
    expect(results.map((b) => b.tool_use_id ?? b.type)).toEqual(["toolu_1", "toolu_2", "text"]);
    expect(results[1]!.is_error).toBe(true);
    expect(results[2]).toEqual({ type: "text", text: "(interrupted by user)" });
    expect(out.messages[3]!.role).toBe("assistant");
    // the stray result is gone; a user message names it where it stood, so two assistant messages are not in a row
    expect(JSON.stringify(out)).not.toContain("a result whose call is gone");
    expect(out.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"]);
    expect(String(out.messages[4]!.content)).toMatch(
      /a result for call toolu_stray answered no tool call before it and was removed \(recall <<ccr:[0-9a-f]{16}>> reads it\)/,
    );
    expect(r.stderr).toContain("1 user message naming removed results kept where they stood between two assistant messages");
    expect(r.stderr).not.toContain("provider check");

    const marker = /<<ccr:[0-9a-f]{16}>>/.exec(String(results[0]!.content))![0];
    const back = spool(["recall", marker, "--workspace", ws]);
    expect(back.status).toBe(0);
    expect(back.stdout).toBe(buildLog);

    const page = spool(["recall", marker, "--workspace", ws, "--grep", "step 2499 ", "--limit", "1"]);
    expect(page.stdout).toContain("2500: [2499] build step 2499");
  });

  it("with a relative --workspace, recall gives back every archived and saved text (old results go to the archive)", () => {
    const chat: unknown[] = [{ role: "user", content: "go" }];
    for (let t = 0; t < 8; t++) {
      chat.push({ role: "assistant", content: null, tool_calls: [{ id: `c${t}`, type: "function", function: { name: "bash", arguments: "{}" } }] });
      chat.push({ role: "tool", tool_call_id: `c${t}`, content: Array.from({ length: 120 }, (_, i) => `turn ${t} line ${i} ${"x".repeat(30)}`).join("\n") });
    }
    chat.push({ role: "user", content: "next" });
    const r = spool(["compact", "--workspace", "ws-relative", "-"], JSON.stringify(chat));
    expect(r.status).toBe(0);
    const keys = [...new Set([...r.stdout.matchAll(/ccr:([0-9a-f]{16})/g)].map((m) => m[1]!))];
    expect(keys.length).toBeGreaterThan(4);
    expect(readdirSync(join(cwd, "ws-relative", "archive")).length).toBeGreaterThan(0);
    for (const key of keys) {
      const back = spool(["recall", key, "--workspace", "ws-relative"]);
      expect(back.status, key).toBe(0);
      expect(back.stdout).toMatch(/^turn \d line 0 /);
    }
  });

  it("recall refuses an archive entry that no longer hashes to its key, and one session's refused entry does not hide the key in another", () => {
    const root = join(cwd, "recall-root");
    const good = join(root, "sessions", "20260101-000000-good1");
    const bad = join(root, "sessions", "20260101-000000-bad01");
    const key = new DiskArchive({ dir: join(good, "archive") }).put("the original text\n");
    mkdirSync(join(bad, "archive"), { recursive: true });
    symlinkSync("/etc/hostname", join(bad, "archive", `${key}.ccr`));
    const found = spool(["recall", key, "--root", root]);
    expect(found.status).toBe(0);
    expect(found.stdout).toBe("the original text\n");
    writeFileSync(join(good, "archive", `${key}.ccr`), "garbage");
    const damaged = spool(["recall", key, "--workspace", good]);
    expect(damaged.status).toBe(1);
    expect(damaged.stderr).toContain(`archive entry ${key} no longer holds the text it was saved with`);
  });

  it("running compact on its own output changes nothing and saves no new file", () => {
    const ws = join(cwd, "ws2");
    const first = spool(["compact", "--workspace", ws, "-"], JSON.stringify(damaged));
    const files = readdirSync(join(ws, "results"));
    const second = spool(["compact", "--workspace", ws, "-"], first.stdout);
    expect(second.status).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual(JSON.parse(first.stdout));
    expect(second.stderr).toContain("repairs: none needed");
    expect(second.stderr).toContain("files saved: none");
    expect(readdirSync(join(ws, "results"))).toEqual(files);
  });

  it("keeps the OpenAI Responses shape ({input: [...]}) and honours --format", () => {
    const body = {
      model: "gpt-x",
      input: [
        { role: "user", content: "list files" },
        { type: "function_call", call_id: "c1", name: "ls", arguments: "{}" },
        { type: "function_call", call_id: "c2", name: "ls", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "a\nb" },
      ],
    };
    const r = spool(["compact", "--format", "openai-responses", "--workspace", join(cwd, "ws3"), "-"], JSON.stringify(body));
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { model: string; input: Record<string, unknown>[] };
    expect(out.model).toBe("gpt-x");
    expect(out.input.map((i) => i["type"] ?? i["role"])).toEqual(["user", "function_call", "function_call", "function_call_output", "function_call_output"]);
    expect(String(out.input[4]!["output"])).toContain("[ERROR:missing_result]");
  });

  it("results split across consecutive user messages (Claude Code) need no repair and no provider check fails", () => {
    const split = [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "t1", name: "bash", input: {} },
          { type: "tool_use", id: "t2", name: "bash", input: {} },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "out t1" }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: "out t2" }] },
      { role: "assistant", content: "done" },
    ];
    const r = spool(["compact", "--workspace", join(cwd, "ws-split"), "-"], JSON.stringify(split));
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(split);
    expect(r.stderr).toContain("repairs: none needed");
    // the caller's consecutive user messages are named as theirs; no pairing rule is broken
    expect(r.stderr).not.toMatch(/provider check: (call_answered_once|result_has_call|results_first)/);
    expect(r.stderr).toContain("roles_alternate: messages.3: a second user message in a row (as in the input, left as it is)");
  });

  it("a Responses request continuing a stored response keeps the outputs of its stored calls", () => {
    const body = {
      model: "gpt-5",
      previous_response_id: "resp_abc",
      input: [{ type: "function_call_output", call_id: "call_1", output: '{"temp":21}' }],
      tools: [],
    };
    const r = spool(["compact", "--workspace", join(cwd, "ws-prev"), "-"], JSON.stringify(body));
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(body);
    expect(r.stderr).toContain("repairs: none needed");
    expect(r.stderr).not.toContain("provider check");
    const ref = {
      model: "gpt-5",
      input: [
        { type: "item_reference", id: "fc_1" },
        { type: "function_call_output", call_id: "call_1", output: "x" },
      ],
    };
    const r2 = spool(["compact", "--workspace", join(cwd, "ws-prev"), "-"], JSON.stringify(ref));
    expect(JSON.parse(r2.stdout)).toEqual(ref);
  });

  it("--turn ages results as of that turn: a fresh 9 KB result is kept now and summarised ten turns on", () => {
    const chat = [
      { role: "user", content: "read it" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: buildLog.slice(0, 9_000) },
      { role: "assistant", content: "read." },
    ];
    const now = spool(["compact", "--workspace", join(cwd, "ws4"), "-"], JSON.stringify(chat));
    expect(JSON.parse(now.stdout)).toEqual(chat);
    const later = spool(["compact", "--turn", "10", "--workspace", join(cwd, "ws4"), "-"], JSON.stringify(chat));
    const out = JSON.parse(later.stdout) as { content: string }[];
    expect(out[2]!.content).toMatch(/^\[Old tool result cleared — \d+ lines, 9000 chars, text\]/);
    expect(later.stderr).toContain("1 summarized");
  });

  it("a byte order mark before the JSON is read past", () => {
    const chat = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ];
    const r = spool(["compact", "--workspace", join(cwd, "ws-bom"), "-"], `\ufeff${JSON.stringify(chat)}`);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(chat);
  });

  it("--format naming another format than the file's is refused with exit 2 and no output", () => {
    const r = spool(["compact", "--format", "openai-chat", "--workspace", join(cwd, "ws5"), "-"], JSON.stringify(damaged));
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      "spool compact: the conversation is in anthropic format, not openai-chat: nothing was changed. Use --format anthropic, or --format auto to detect it.\n",
    );
  });

  it("broken JSON is a clear error with exit 2 and no output", () => {
    const file = join(cwd, "broken.json");
    writeFileSync(file, '[{"role": "user", "content": ');
    const r = spool(["compact", file]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^spool compact: \S*broken\.json is not valid JSON .*nothing was written\nRun 'spool compact --help' for usage\.\n$/);
    expect(readFileSync(file, "utf8")).toBe('[{"role": "user", "content": ');
  });

  it("an unknown shape or format is a clear error with exit 2", () => {
    expect(spool(["compact", "-"], '{"foo": 1}')).toMatchObject({ status: 2, stdout: "" });
    expect(spool(["compact", "-"], '{"foo": 1}').stderr).toContain('an object with a "messages" or "input" array');
    expect(spool(["compact", "-"], '[{"role":"wizard","content":"x"}]').stderr).toMatch(/unknown role "wizard"/);
    expect(spool(["compact", "--format", "gemini", "-"], "[]").stderr).toContain('unknown --format "gemini"');
    expect(spool(["compact", "--turn", "soon", "-"], "[]").stderr).toContain("--turn must be a whole number of 0 or more");
    expect(spool(["compact"]).status).toBe(2);
  });

  it("any input either compacts (exit 0) or is refused with a one-line reason (exit 2), never a stack trace", () => {
    const ws = join(cwd, "ws-fuzz");
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc
            .array(fc.record({ role: fc.constantFrom("user", "assistant", "tool", "system"), content: fc.oneof(fc.string(), fc.jsonValue()) }), {
              maxLength: 4,
            })
            .map((a) => JSON.stringify(a)),
        ),
        (input) => {
          const r = spool(["compact", "--workspace", ws, "-"], input);
          expect([0, 2]).toContain(r.status);
          expect(r.stderr).not.toMatch(/\n\s+at /);
          if (r.status === 2) expect(r.stdout).toBe("");
        },
      ),
      { numRuns: 25 },
    );
  });

  it("--help prints the usage and the command is listed in spool --help", () => {
    expect(spool(["compact", "--help"]).stdout).toContain("Usage: spool compact");
    expect(spool(["--help"]).stdout).toMatch(/compact .*\n.*recall /);
  });
});

describe("spool recall (built binary)", () => {
  it("a key that is not in the workspace exits 1 naming it; a missing workspace or key exits 2", () => {
    const ws = join(cwd, "ws-empty");
    spool(["compact", "--workspace", ws, "-"], "[]");
    const miss = spool(["recall", "0123456789abcdef", "--workspace", ws]);
    expect(miss.status).toBe(1);
    expect(miss.stderr).toContain('key "0123456789abcdef" not found');
    expect(spool(["recall", "0123456789abcdef", "--workspace", join(cwd, "nope")]).stderr).toContain("does not exist");
    expect(spool(["recall", "no key here", "--workspace", ws])).toMatchObject({ status: 2 });
    expect(spool(["recall", "0123456789abcdef", "--workspace", ws, "--offset", "0"]).stderr).toContain("--offset must be a whole number of 1 or more");
  });

  it("without --workspace it searches the sessions under .spool/sessions", () => {
    const r = spool(["compact", "-"], JSON.stringify(damaged));
    const marker = /<<ccr:[0-9a-f]{16}>>/.exec(r.stdout)![0];
    expect(spool(["recall", marker]).stdout).toBe(buildLog);
  });
});
