// Tests that run a process as another user: as root, `nobody` (uid 65534); otherwise this user. That
// process must reach Node and the built files it loads, and a checkout under a directory only root can
// enter (a 0700 home, a `mktemp -d`) is out of its reach: such a test is skipped there, not failed.
import { spawnSync } from "node:child_process";

export const OTHER_USER = process.geteuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

/** Whether the other user can run Node and read every one of `paths`. */
export function otherUserCanRead(...paths: string[]): boolean {
  if (process.platform !== "linux") return false;
  const check = `for (const p of ${JSON.stringify(paths)}) require("node:fs").accessSync(p, require("node:fs").constants.R_OK)`;
  return spawnSync(process.execPath, ["-e", check], { stdio: "ignore", ...OTHER_USER }).status === 0;
}
