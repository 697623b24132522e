// Benchmark input: a long session as `spool run --session` leaves it. Per call: the start record (the
// session's and the call's run info), the operation opened, one output checkpoint in the operation's
// sidecar, the settle (transcript entry, operations emptied, scope retired: the sidecar is unlinked)
// and the end record with truncation and details. Outputs vary like tool output does: most small,
// some tens of KB, one in ten at the 50 KB cap; every output is distinct text.
//   node bench/run-session.gen.mjs ROOT MB [ID]   writes ROOT/sessions/ID (default long-session)
import { statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { appendList, ephemeralScope, list, openSessionRepo, retireScope, setValue, value } from "../dist/store/index.js";

const WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua".split(" ");
let seed = 7;
function text(n, tag) {
  let s = `${tag}:`;
  while (s.length < n) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    s += WORDS[seed % WORDS.length] + (seed % 7 === 0 ? "\n" : " ");
  }
  return s.slice(0, n);
}

/** Writes calls until the main log reaches `targetBytes`; returns the log's path and the call count. */
export async function buildRunSession(sessionsRoot, id, targetBytes) {
  const repo = openSessionRepo(sessionsRoot, { backend: "jsonl" });
  const { store, file } = await repo.create({ id });
  const RUN = value("spool", "run");
  const OPEN = value("harness", "operations");
  const TRANSCRIPT = list("transcript");
  const first = {
    command: "make check",
    cwd: "/work/project",
    pid: 4242,
    startedAt: "2026-11-01T09:00:00.000Z",
    endedAt: null,
    status: "running",
    exitCode: null,
  };
  let calls = 0;
  for (let i = 1; ; i++) {
    if (i % 200 === 0 && statSync(file).size >= targetBytes) break;
    const callId = `call-${i}`;
    const opId = `op-${i}`;
    const command = `make step-${i} ${text(40, "args")}`;
    const startedAt = new Date(Date.parse(first.startedAt) + i * 1000).toISOString();
    const endedAt = new Date(Date.parse(startedAt) + 700).toISOString();
    const info = { command, cwd: "/work/project", pid: 4242, startedAt, endedAt: null, status: "running", exitCode: null };
    await store.commit([setValue(RUN, { ...first, pid: 4242 }), setValue(value("spool", `run:${callId}`), info)]);
    await store.commit([setValue(OPEN, { [opId]: { startedAt, calls: [{ toolCallId: callId, toolName: "bash", args: { command } }] } })]);
    const scope = ephemeralScope(`op:${opId}`);
    const r = (i * 2654435761) % 100;
    const chars = r < 60 ? 50 + ((r * 37) % 2000) : r < 90 ? 2000 + ((r * 7919) % 18000) : 51200;
    const out = text(chars, `out${i}`);
    const lines = out.split("\n").length;
    const base = [["r", { content: [{ type: "text", text: out.slice(0, 4000) }], details: {}, terminate: false }]];
    await store.commit([appendList(list("tool_output", `${opId}:${callId}`, scope), base, "base")]);
    const result = { role: "tool", toolCallId: callId, toolName: "bash", isError: false, content: [{ type: "text", text: out }] };
    await store.commit([appendList(TRANSCRIPT, result), setValue(OPEN, {}), retireScope(scope)]);
    const truncation = {
      truncated: chars === 51200,
      truncatedBy: chars === 51200 ? "bytes" : null,
      totalLines: lines * (chars === 51200 ? 3 : 1),
      totalBytes: chars * (chars === 51200 ? 3 : 1),
      outputLines: lines,
      outputBytes: chars,
      maxLines: 2000,
      maxBytes: 51200,
      cutLines: 0,
      lastLinePartial: false,
    };
    await store.commit([
      setValue(RUN, { ...first, endedAt, status: "succeeded", exitCode: 0 }),
      setValue(value("spool", `run:${callId}`), { ...info, endedAt, status: "succeeded", exitCode: 0, truncation, details: { exitCode: 0 } }),
    ]);
    calls = i;
  }
  await store.close();
  return { file, calls };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [root, mb, id = "long-session"] = process.argv.slice(2);
  const { file, calls } = await buildRunSession(join(root, "sessions"), id, Number(mb) * 1e6);
  console.log(`${file}: ${calls} calls, ${(statSync(file).size / 1e6).toFixed(1)} MB`);
}
