// Tool names as people write them: "Bash", "@read", " recall ". Compared case-insensitively without a leading "@".
export function normaliseToolName(name: string): string {
  return name.trim().replace(/^@/, "").toLowerCase();
}
