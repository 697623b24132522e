// Realistic transcripts in the four provider formats, with the fields people actually send: thinking
// blocks and signatures, cache_control, several results in one user message, text after results,
// images, developer messages, null content, refusals, reasoning items, item ids and statuses,
// provider options. Round trips must give every one of them back.

const LOG = [
  "npm ERR! code ELIFECYCLE",
  "> spool@0.1.0 test",
  " FAIL  test/context/budget.test.ts > preview keeps the tail",
  "   AssertionError: expected 'abc' to be 'abd'",
].join("\n");

export const anthropicTranscript: unknown[] = [
  { role: "user", content: "Why does the build fail? Check the log and the config." },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "I should read the CI log first, then the tsconfig.", signature: "EqQBCkgIARABGAIiQL" },
      { type: "text", text: "Let me look at both." },
      { type: "tool_use", id: "toolu_01A", name: "bash", input: { command: "npm test 2>&1 | tail -40" } },
      { type: "tool_use", id: "toolu_01B", name: "read", input: { path: "tsconfig.json" }, cache_control: { type: "ephemeral" } },
    ],
  },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "toolu_01A", content: LOG, is_error: true },
      { type: "tool_result", tool_use_id: "toolu_01B", content: [{ type: "text", text: '{ "compilerOptions": { "strict": true } }' }], is_error: false },
      { type: "text", text: "Also, the screenshot:" },
      {
        type: "image",
        source: {
          type: "base64",
          media_type: "image/png",
          data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        },
      },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pYeOYYQ==" },
      { type: "server_tool_use", id: "srvtoolu_01", name: "web_search", input: { query: "vitest AssertionError expected to be" } },
      {
        type: "web_search_tool_result",
        tool_use_id: "srvtoolu_01",
        content: [{ type: "web_search_result", url: "https://vitest.dev/api/expect", title: "expect", encrypted_content: "abc" }],
      },
      {
        type: "text",
        text: "The test compares 'abc' to 'abd'.",
        citations: [{ type: "web_search_result_location", url: "https://vitest.dev/api/expect", title: "expect", encrypted_index: "x", cited_text: "toBe" }],
      },
      { type: "tool_use", id: "toolu_02", name: "edit", input: { path: "test/context/budget.test.ts", old: "abd", new: "abc" } },
    ],
  },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "toolu_02", content: "[ERROR:EACCES] permission denied", is_error: true, cache_control: { type: "ephemeral" } },
    ],
  },
  { role: "user", content: [{ type: "text", text: "Try again with sudo? No — just explain." }] },
  { role: "assistant", content: [{ type: "text", text: "The file is read-only; here is the fix to apply by hand." }] },
  {
    role: "user",
    content: [
      { type: "document", source: { type: "text", media_type: "text/plain", data: "notes" }, title: "notes.txt" },
      { type: "text", text: "And these notes." },
    ],
  },
  { role: "assistant", content: "Noted." },
];

export const openaiChatTranscript: unknown[] = [
  { role: "developer", content: "You are a coding agent. Use tools." },
  { role: "system", content: [{ type: "text", text: "Be brief." }], name: "policy" },
  {
    role: "user",
    content: [
      { type: "text", text: "What is in the repo root?" },
      { type: "image_url", image_url: { url: "https://example.com/shot.png", detail: "low" } },
    ],
  },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "call_abc123", type: "function", function: { name: "list_dir", arguments: '{"path":"."}' } },
      { id: "call_def456", type: "function", function: { name: "read", arguments: '{ "path": "README.md" }' } },
      { id: "call_bad789", type: "function", function: { name: "grep", arguments: '{"pattern": "TODO"' } },
    ],
    refusal: null,
  },
  { role: "tool", tool_call_id: "call_abc123", content: "README.md\npackage.json\nsrc/\ntest/" },
  { role: "tool", tool_call_id: "call_def456", content: [{ type: "text", text: "# spool\n\nspool owns what happens to a tool's output." }] },
  { role: "tool", tool_call_id: "call_bad789", content: "[ERROR:bad_arguments] arguments are not valid JSON" },
  { role: "assistant", content: "The root has a README, package.json, src/ and test/.", annotations: [] },
  { role: "user", content: "Run the custom formatter." },
  { role: "assistant", content: "", tool_calls: [{ id: "call_cus1", type: "custom", custom: { name: "format", input: "src/**/*.ts" } }] },
  { role: "tool", tool_call_id: "call_cus1", content: "[ERROR] formatter crashed" },
  { role: "assistant", content: [{ type: "refusal", refusal: "I won't push to main." }] },
];

export const openaiResponsesTranscript: unknown[] = [
  { role: "developer", content: "You are a coding agent." },
  {
    type: "message",
    role: "user",
    content: [
      { type: "input_text", text: "Find the failing test." },
      { type: "input_image", image_url: "data:image/png;base64,AAAA", detail: "auto" },
    ],
  },
  { type: "reasoning", id: "rs_01", summary: [{ type: "summary_text", text: "Run the tests, then grep." }], encrypted_content: "gAAAAB" },
  { type: "function_call", id: "fc_01", call_id: "call_1", name: "bash", arguments: '{"command":"npm test"}', status: "completed" },
  { type: "function_call", id: "fc_02", call_id: "call_2", name: "grep", arguments: '{"pattern":"FAIL"}', status: "completed" },
  { type: "function_call_output", call_id: "call_1", output: LOG },
  {
    type: "function_call_output",
    id: "fco_2",
    call_id: "call_2",
    output: [{ type: "input_text", text: "test/context/budget.test.ts:12: FAIL" }],
    status: "completed",
  },
  {
    type: "message",
    id: "msg_01",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: "budget.test.ts line 12 fails.", annotations: [], logprobs: [] }],
  },
  { role: "user", content: "Fix it." },
  { type: "message", id: "msg_02", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Editing now.", annotations: [] }] },
  { type: "custom_tool_call", id: "ctc_1", call_id: "call_3", name: "apply_patch", input: "*** Begin Patch\n*** End Patch" },
  { type: "custom_tool_call_output", call_id: "call_3", output: "[ERROR:conflict] patch did not apply" },
  { type: "item_reference", id: "msg_01" },
  { role: "assistant", content: "Done." },
];

export const aiSdkTranscript: unknown[] = [
  { role: "system", content: "You are a coding agent." },
  {
    role: "user",
    content: [
      { type: "text", text: "Summarise package.json and show the logo." },
      { type: "image", image: "https://example.com/logo.png", mediaType: "image/png" },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "Read the file, then fetch the logo.", providerOptions: { anthropic: { signature: "sig" } } },
      { type: "text", text: "Reading." },
      { type: "tool-call", toolCallId: "tc_1", toolName: "read", input: { path: "package.json" }, providerOptions: { openai: { itemId: "fc_9" } } },
      { type: "tool-call", toolCallId: "tc_2", toolName: "fetch_image", input: { url: "https://example.com/logo.png" } },
      { type: "tool-call", toolCallId: "tc_3", toolName: "stat", input: { path: "missing.txt" } },
    ],
  },
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: "tc_1",
        toolName: "read",
        output: { type: "json", value: { name: "spool", version: "0.1.0", private: false, keywords: ["agent", "llm"] } },
      },
      {
        type: "tool-result",
        toolCallId: "tc_2",
        toolName: "fetch_image",
        output: {
          type: "content",
          value: [
            { type: "text", text: "logo:" },
            { type: "file", mediaType: "image/png", data: { type: "data", data: "iVBORw0KGgo=" } },
          ],
        },
      },
      {
        type: "tool-result",
        toolCallId: "tc_3",
        toolName: "stat",
        output: { type: "error-text", value: "[ERROR:ENOENT] no such file" },
        providerOptions: { x: { y: 1 } },
      },
    ],
  },
  { role: "assistant", content: "spool 0.1.0; the logo is attached." },
  { role: "user", content: "thanks" },
];
