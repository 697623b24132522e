// The PostgreSQL server tests use: the one named by SPOOL_TEST_PG, or a throwaway cluster started on
// first use (scripts/pg-cluster.mjs) and stopped by stopTestDatabase(). Never skipped: without a
// server binary, starting fails loudly and says how to get one.
import { randomBytes } from "node:crypto";
// @ts-expect-error plain-JS script shared with the benchmarks
import { startPgCluster } from "../../../scripts/pg-cluster.mjs";

export interface Cluster {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly dir: string;
  readonly password: string;
  halt(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

let shared: Promise<{ url: string; cluster?: Cluster }> | undefined;

/** The URL of the test database (starting a cluster if SPOOL_TEST_PG is unset). */
export function testDatabase(): Promise<{ url: string; cluster?: Cluster }> {
  shared ??= process.env.SPOOL_TEST_PG
    ? Promise.resolve({ url: process.env.SPOOL_TEST_PG })
    : (startPgCluster() as Promise<Cluster>).then((cluster) => ({ url: cluster.url, cluster }));
  return shared;
}

export async function stopTestDatabase(): Promise<void> {
  const s = shared;
  shared = undefined;
  await (await s)?.cluster?.stop();
}

/** A cluster of a test's own, for tests that stop the server. */
export function ownCluster(): Promise<Cluster> {
  return startPgCluster() as Promise<Cluster>;
}

/** A schema no other test file uses, so runs against a shared SPOOL_TEST_PG never collide. */
export const uniqueSchema = (prefix = "t"): string => `${prefix}_${randomBytes(5).toString("hex")}`;
export const uniqueSession = (prefix = "s"): string => `${prefix}-${randomBytes(6).toString("hex")}`;
