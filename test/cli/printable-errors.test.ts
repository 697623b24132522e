// Error and warning lines that quote what a user or a model typed (a flag, a value, a path, a command
// name) show its control characters as \xNN / \uNNNN: printed raw, "\x1b[2J" in an argument cleared
// the user's screen and a bidi override reordered the line. Each case here echoed ESC and BEL raw.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

const HOSTILE = "\x1b[2Jbad\x07\u202e\x9b";
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]/;

it.each([
  ["an unknown option", ["run", `--nope${HOSTILE}`, "--", "true"]],
  ["a bad --timeout", ["run", "--timeout", HOSTILE, "--", "true"]],
  ["a bad --store", ["run", "--store", HOSTILE, "--", "true"]],
  ["a bad gc --older-than", ["gc", "--older-than", HOSTILE]],
  ["a missing fold file", ["fold", HOSTILE]],
  ["an unknown command", [HOSTILE]],
  ["a --root under which there is no session", ["inspect", "x", "--root", join("ROOT", HOSTILE)]],
  ["sessions under a --root with none", ["sessions", "--root", join("ROOT", HOSTILE)]],
])("%s: the line shows the input's escapes, not the escapes themselves", (_name, args) => {
  const cwd = tempDir("spool-printable-");
  mkdirSync(join(cwd, HOSTILE));
  const r = runSpool(
    args.map((a) => a.replace("ROOT", cwd)),
    { cwd, input: "" },
  );
  const out = r.stderr + r.stdout;
  expect(out, JSON.stringify(out)).not.toMatch(RAW);
  expect(out).toContain("\\x1b[2Jbad\\x07\\u202e\\x9b");
});
