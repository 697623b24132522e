// A scripted agent for the AI SDK tests: each step decides its tool calls from the prompt it was given
// (spill paths and recall keys are read out of earlier tool results, as a model would), so the run
// exercises spool's real outputs rather than values fixed in advance.
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export const FIXTURES = new URL("./fixtures/", import.meta.url).pathname;

export interface PromptResult {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly text: string;
  readonly isError: boolean;
}

export type Prompt = readonly { role: string; content: unknown }[];

/** Every tool result in a provider-level prompt (LanguageModelV4Prompt), in order. */
export function promptResults(prompt: Prompt): PromptResult[] {
  const out: PromptResult[] = [];
  for (const m of prompt) {
    if (m.role !== "tool" || !Array.isArray(m.content)) continue;
    for (const p of m.content as { type: string; toolCallId: string; toolName: string; output: { type: string; value: unknown } }[]) {
      if (p.type !== "tool-result") continue;
      const text = typeof p.output.value === "string" ? p.output.value : JSON.stringify(p.output.value);
      out.push({ toolCallId: p.toolCallId, toolName: p.toolName, text, isError: p.output.type.startsWith("error") });
    }
  }
  return out;
}

/** Problems with tool-call/tool-result pairing in a provider-level prompt; empty when valid. */
export function pairingProblems(prompt: Prompt): string[] {
  const problems: string[] = [];
  for (let i = 0; i < prompt.length; i++) {
    const m = prompt[i]!;
    if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
    const calls = (m.content as { type: string; toolCallId?: string }[]).filter((p) => p.type === "tool-call").map((p) => p.toolCallId!);
    if (calls.length === 0) continue;
    const results: string[] = [];
    for (let j = i + 1; j < prompt.length && prompt[j]!.role === "tool"; j++) {
      for (const p of prompt[j]!.content as { type: string; toolCallId: string }[]) if (p.type === "tool-result") results.push(p.toolCallId);
    }
    if ([...calls].sort().join() !== [...results].sort().join()) problems.push(`message ${i}: calls ${calls.join()} vs results ${results.join()}`);
  }
  return problems;
}

export interface Call {
  readonly toolName: string;
  readonly input: Record<string, unknown>;
}

export type Step = (prompt: Prompt, find: (callId: string) => PromptResult) => Call[] | string;

/**
 * The spill path of a result: from its footer while the result is in the prompt whole or as a preview;
 * once command output has aged into a one-line summary, from the model's own earlier `read` call of it
 * (as a model would find it again).
 */
const spillOf = (r: PromptResult, prompt?: Prompt): string => {
  const m = /Full output: (\S+)\]/.exec(r.text);
  if (m) return m[1]!;
  for (const message of prompt ?? []) {
    if (message.role !== "assistant" || !Array.isArray(message.content)) continue;
    for (const p of message.content as { type: string; toolName?: string; input?: { path?: unknown } }[]) {
      if (p.type === "tool-call" && p.toolName === "read" && typeof p.input?.path === "string" && p.input.path.includes("/spill/")) return p.input.path;
    }
  }
  throw new Error(`no spill path in ${r.toolCallId}: ${r.text.slice(-300)}`);
};
const keyOf = (r: PromptResult): string => {
  const m = /<<ccr:([0-9a-f]{16})>>/.exec(r.text);
  if (!m) throw new Error(`no recall key in ${r.toolCallId}: ${r.text.slice(0, 300)}`);
  return m[1]!;
};

/** The 13-step session the tests script; `cwd` gets the source file step 5 reads. */
export function agentScript(cwd: string): Step[] {
  writeFileSync(
    join(cwd, "parser.ts"),
    Array.from({ length: 400 }, (_, i) => `export const rule${i} = (s: string) => s.slice(${i}) + "${"x".repeat(i % 50)}";`).join("\n") + "\n",
  );
  return [
    /* 0 */ () => [{ toolName: "bash", input: { command: `node ${join(FIXTURES, "build-log.mjs")}` } }],
    /* 1 */ (_p, find) => [{ toolName: "read", input: { path: spillOf(find("s0-0")), offset: 1, limit: 200 } }],
    /* 2 */ () => [
      { toolName: "bash", input: { command: "echo 'FAIL test/parser.test.ts > parses empty input'; echo 'AssertionError: expected 1 to be 2' >&2; exit 1" } },
    ],
    /* 3 */ (_p, find) => [
      { toolName: "bash", input: { command: "echo one" } },
      { toolName: "bash", input: { command: "seq 1 5000" } },
      { toolName: "read", input: { path: spillOf(find("s0-0")), offset: 201, limit: 200 } },
    ],
    /* 4 */ () => [{ toolName: "bash", input: { command: `node ${join(FIXTURES, "test-run.mjs")}` } }],
    /* 5 */ () => [{ toolName: "read", input: { path: "parser.ts" } }],
    /* 6 */ (p, find) => [{ toolName: "bash", input: { command: `grep -c warning ${spillOf(find("s0-0"), p)}` } }],
    /* 7 */ (p, find) => [{ toolName: "bash", input: { command: `wc -l < ${spillOf(find("s0-0"), p)}` } }],
    /* 8 */ () => [{ toolName: "bash", input: { command: "echo fixing parser" } }],
    /* 9 */ () => [{ toolName: "bash", input: { command: "echo rerun" } }],
    /* 10 */ (_p, find) => [{ toolName: "recall", input: { key: keyOf(find("s1-0")) } }],
    /* 11 */ (_p, find) => [{ toolName: "recall", input: { key: `<<ccr:${keyOf(find("s0-0"))}>>` } }],
    /* 12 */ () => "The build passes; the parser test fails on empty input.",
  ];
}
